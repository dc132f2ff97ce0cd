#pragma once
// The frames of the last kSnapshotHistorySize snapshots of one client, indexed by sequence: the
// server's candidate baselines and the client's decoded states. Agents live in one circular pool
// of fixed capacity, each frame contiguous (a frame that would straddle the end starts again at
// the front), as Quake III keeps its clients' snapshot entities in one circular array
// (svs.snapshotEntities): memory is fixed per client, nothing is allocated once warm, and a frame
// whose agents were overwritten by newer frames is simply no longer available as a baseline.
// The pool is allocated as frames fill it (doubling, up to its capacity), so memory follows
// what a client is actually sent; it never grows again once the head has wrapped.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "swarmfield/protocol/agent_frame.hpp"

namespace swarmfield::protocol {

/// Snapshots remembered per client (and so the largest baseline distance on the wire).
inline constexpr std::uint32_t kSnapshotHistorySize = 32;

class SnapshotHistory {
 public:
  /// `pool_agents`: agent entries held over all remembered frames (24 bytes each). A frame larger
  /// than the pool is not stored. Default: room for 8 frames of 16384 agents (3.1 MB at most).
  explicit SnapshotHistory(std::size_t pool_agents = 8 * 16384);

  /// Stores a copy of `frame` under frame.sequence, replacing whatever that ring slot held;
  /// older frames whose agents it overwrites become unavailable. Views from find() are valid
  /// until the next store() (the pool may grow). Returns false (nothing stored)
  /// if the frame has more agents than the pool.
  bool store(const AgentFrame& frame);
  /// Grows the pool (up to its capacity) so that reserve(max_agents, ...) need not refuse for
  /// want of a grown pool. Moves the pool: views from find() are invalid afterwards.
  void grow_for(std::size_t max_agents);
  /// Room for a frame of at most `max_agents` agents at the pool's head, to encode into
  /// (SnapshotEncoder::encode with a span) and then commit() without a copy. Empty when the
  /// pool would have to grow first (views would move), when `max_agents` exceeds the pool, or
  /// when the room overlaps `keep`'s agents (the baseline being read while writing): the caller
  /// then encodes elsewhere and store()s. Writing into the room makes the frames it overlaps
  /// unavailable only once committed; a caller that writes and does not commit must clear().
  [[nodiscard]] std::span<AgentState> reserve(std::size_t max_agents, const AgentFrameView& keep) noexcept;
  /// Records the first `size` agents of the last reserve() as the frame `sequence` (world tick
  /// `tick`, density grid `grid`), like store() of that frame. `size` <= the reserved room.
  void commit(std::uint32_t sequence, std::uint32_t tick, std::size_t size, const DensityGrid& grid);
  /// The frame of `sequence` if it is still held intact.
  [[nodiscard]] std::optional<AgentFrameView> find(std::uint32_t sequence) const noexcept;
  /// Forgets every frame (e.g. a client reconnecting).
  void clear() noexcept;
  [[nodiscard]] std::size_t pool_capacity() const noexcept { return capacity_; }

 private:
  struct Slot {
    bool used = false;
    std::uint32_t sequence = 0;
    std::uint32_t tick = 0;
    std::uint64_t begin = 0;  // monotonic pool address of the first agent
    std::size_t size = 0;
    DensityGrid grid;
  };
  void record(std::uint32_t sequence, std::uint32_t tick, std::size_t size, const DensityGrid& grid);

  std::size_t capacity_;
  std::uint64_t head_ = 0;  // monotonic address of the next free entry
  std::uint64_t reserved_ = 0;  // monotonic address of the last reserve()'s room
  std::array<Slot, kSnapshotHistorySize> slots_{};
  std::vector<AgentState> pool_;
};

}  // namespace swarmfield::protocol
