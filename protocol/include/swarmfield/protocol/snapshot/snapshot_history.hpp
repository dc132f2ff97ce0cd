#pragma once
// The frames of the last kSnapshotHistorySize snapshots of one client, indexed by sequence: the
// server's candidate baselines and the client's decoded states. Which frames are available is
// decided as in one circular pool of fixed capacity, each frame contiguous (a frame that would
// straddle the end starts again at the front), as Quake III keeps its clients' snapshot entities
// in one circular array (svs.snapshotEntities): a frame whose agents newer frames would have
// overwritten there is no longer available as a baseline.
// The memory behind it is smaller: a frame is stored anywhere in a physical pool where it
// overlaps no frame still available (after the last frame, else at the front, else past every
// available frame, growing the pool), so the pool holds about the available frames (32 frames
// of a bot's few hundred agents: ~200 KB) instead of growing to the whole capacity (3.1 MB per
// client by default) before its head wraps. Availability, and so every baseline and payload, is
// the same as with the fixed pool. Nothing is allocated once the pool has grown to fit.
// A server that must not grow while it runs (issue 10: no growth over a 10-minute run, while
// the horde converging on a player fills its view) takes the whole pool at once instead
// (HistoryPool::kFixed), with the first frame that holds agents: frames then sit at their ring
// address, as in Quake III, and the memory is fixed from there on (capacity x 24 bytes: 3.1 MB
// by default). Not at construction: a client that joins and never looks at an agent (an idle
// or hostile connection) still costs nothing.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "swarmfield/protocol/snapshot/agent_frame.hpp"

namespace swarmfield::protocol {

/// Snapshots remembered per client (and so the largest baseline distance on the wire).
inline constexpr std::uint32_t kSnapshotHistorySize = 32;

/// How a SnapshotHistory gets its memory.
enum class HistoryPool {
  kOnDemand,  ///< grows with the frames it holds (about what the available frames need)
  kFixed,     ///< the whole capacity, allocated and touched with the first frame that holds
              ///< agents; never grows or moves after that
};

class SnapshotHistory {
 public:
  /// `pool_agents`: agent entries held over all remembered frames (24 bytes each). A frame larger
  /// than the pool is not stored. Default: room for 8 frames of 16384 agents (3.1 MB at most
  /// on demand; about twice that in the worst case of scattered frames, see pool_allocated()).
  /// `pool`: on demand (default) or fixed (exactly pool_agents entries once a frame holds agents).
  explicit SnapshotHistory(std::size_t pool_agents = 8 * 16384, HistoryPool pool = HistoryPool::kOnDemand);

  /// Stores a copy of `frame` under frame.sequence, replacing whatever that ring slot held;
  /// older frames whose agents it overwrites become unavailable. Views from find() are valid
  /// until the next store() (the pool may grow). Returns false (nothing stored)
  /// if the frame has more agents than the pool.
  bool store(const AgentFrame& frame);
  /// Grows the pool (if it has no room clear of the available frames) so that
  /// reserve(max_agents, ...) need not refuse for want of a grown pool. Moves the pool: views
  /// from find() are invalid afterwards. With HistoryPool::kFixed: takes the whole pool if it is
  /// not taken yet (max_agents > 0), else does nothing.
  void grow_for(std::size_t max_agents);
  /// Room for a frame of at most `max_agents` agents, clear of every available frame (so of
  /// `keep`, the baseline being read while writing), to encode into (SnapshotEncoder::encode
  /// with a span) and then commit() without a copy. Empty when the pool would have to grow
  /// first (views would move) or when `max_agents` exceeds the capacity: the caller then encodes
  /// elsewhere and store()s. A caller that writes and does not commit must clear().
  [[nodiscard]] std::span<AgentState> reserve(std::size_t max_agents, const AgentFrameView& keep) noexcept;
  /// Records the first `size` agents of the last reserve() as the frame `sequence` (world tick
  /// `tick`, density grid `grid`), like store() of that frame. `size` <= the reserved room.
  void commit(std::uint32_t sequence, std::uint32_t tick, std::size_t size, const DensityGrid& grid);
  /// The frame of `sequence` if it is still held intact.
  [[nodiscard]] std::optional<AgentFrameView> find(std::uint32_t sequence) const noexcept;
  /// Forgets every frame (e.g. a client reconnecting).
  void clear() noexcept;
  [[nodiscard]] std::size_t pool_capacity() const noexcept { return capacity_; }
  /// Agent entries actually allocated (on demand: grows as needed, at most about twice what the
  /// available frames hold; fixed: 0 until a frame holds agents, then the capacity). For memory
  /// measurements and tests.
  [[nodiscard]] std::size_t pool_allocated() const noexcept { return pool_.size(); }

 private:
  struct Slot {
    bool used = false;
    std::uint32_t sequence = 0;
    std::uint32_t tick = 0;
    std::uint64_t begin = 0;  // monotonic address of the first agent in the fixed-capacity ring
    std::size_t at = 0;       // index of the first agent in pool_
    std::size_t size = 0;
    DensityGrid grid;
  };
  void record(std::uint32_t sequence, std::uint32_t tick, std::size_t at, std::size_t size, const DensityGrid& grid);
  // Monotonic ring address where a frame of n agents starts (n <= capacity_).
  [[nodiscard]] std::uint64_t ring_begin(std::size_t n) const noexcept;
  // Index in pool_ where n agents overlap no frame still available once the ring's head is at
  // head_after; pool_.size() or more when the pool must grow first (then the returned index + n
  // is the size it needs).
  [[nodiscard]] std::size_t place(std::size_t n, std::uint64_t head_after) const noexcept;
  [[nodiscard]] bool available(const Slot& slot) const noexcept;
  // Where a frame of n agents goes: its ring index when the pool is fixed, else place().
  [[nodiscard]] std::size_t slot_for(std::size_t n, std::uint64_t head_after) const noexcept;

  std::size_t capacity_;
  bool fixed_;
  std::uint64_t head_ = 0;  // monotonic address of the next free entry
  std::uint64_t reserved_ = 0;  // monotonic address of the last reserve()'s room
  std::size_t reserved_at_ = 0;  // ... and its index in pool_
  std::size_t pool_head_ = 0;    // index in pool_ just past the last stored frame
  std::array<Slot, kSnapshotHistorySize> slots_{};
  std::vector<AgentState> pool_;
};

}  // namespace swarmfield::protocol
