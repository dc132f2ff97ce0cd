#pragma once
// The agent state one client holds after decoding a snapshot (its "frame"): quantized
// positions, headings and kinds of the agents it tracks, sorted by id, plus the predictor state
// (velocity estimate and tick of the last update) that both ends derive from the same bytes.
// Also the quantization of agent positions used by the snapshot codec (protocol/SNAPSHOTS.md).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "swarmfield/protocol/density_grid.hpp"

namespace swarmfield::protocol {

/// Position quantization: 1/64 cell, in 20 bits per axis, so maps up to 8192 cells a side (the
/// limit of MapInfo) fit with room to spare (8192 * 64 = 2^19).
inline constexpr std::uint32_t kPositionUnitsPerCell = 64;
inline constexpr unsigned kPositionBits = 20;
inline constexpr std::uint32_t kPositionMax = (1u << kPositionBits) - 1;
/// Largest number of agents a frame (and so a snapshot) may hold; decoders refuse more.
inline constexpr std::size_t kMaxFrameAgents = 65536;

/// World units -> quantized position: round(world / cell_size * 64), clamped to
/// [0, kPositionMax]; NaN and negative values give 0. `cell_size` (world units per cell) > 0.
/// Error inside the range <= 1/128 cell.
[[nodiscard]] inline std::uint32_t quantize_agent_position(float world, float cell_size) noexcept {
  const double scaled = static_cast<double>(world) / static_cast<double>(cell_size) * kPositionUnitsPerCell + 0.5;
  if (!(scaled > 0.0)) return 0;  // also NaN
  if (scaled >= static_cast<double>(kPositionMax)) return kPositionMax;
  return static_cast<std::uint32_t>(scaled);
}
/// Quantized position -> world units (the centre of the quantization step).
[[nodiscard]] inline float dequantize_agent_position(std::uint32_t q, float cell_size) noexcept {
  return static_cast<float>(static_cast<double>(q) * static_cast<double>(cell_size) / kPositionUnitsPerCell);
}

/// Agents as parallel arrays sorted by id (strictly increasing). Positions in 1/64 cell
/// (<= kPositionMax), headings in 256 steps per turn (protocol::quantize_heading), kinds as the
/// server's agent kind table index. vxs/vys/ticks are the predictor state (agent_prediction.hpp):
/// velocity in 1/16 position units per tick and the tick of the agent's last update, i.e. of the
/// last snapshot in this frame's chain that carried the agent's values.
struct AgentFrame {
  std::uint32_t sequence = 0;  ///< snapshot sequence that produced this frame
  std::uint32_t tick = 0;      ///< world tick of that snapshot
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> xs;
  std::vector<std::uint32_t> ys;
  std::vector<std::uint8_t> headings;
  std::vector<std::uint8_t> kinds;
  std::vector<std::int16_t> vxs;
  std::vector<std::int16_t> vys;
  std::vector<std::uint32_t> ticks;
  /// Density of the agents the client does not track (empty when not sent).
  DensityGrid grid;

  [[nodiscard]] std::size_t size() const noexcept { return ids.size(); }
  void clear() noexcept;
  void resize(std::size_t n);
  void reserve(std::size_t n);
  /// Appends entry `i` of `other`.
  void push_from(const AgentFrame& other, std::size_t i);
  /// Same agents and values (predictor state and grid included), sequence and tick too.
  friend bool operator==(const AgentFrame&, const AgentFrame&) = default;
};

/// Read-only view of a frame: of an AgentFrame, or of one stored in a SnapshotHistory (pointers
/// into its pool, valid until its next store()).
struct AgentFrameView {
  std::uint32_t sequence = 0;
  std::uint32_t tick = 0;
  std::size_t size = 0;
  const std::uint32_t* ids = nullptr;
  const std::uint32_t* xs = nullptr;
  const std::uint32_t* ys = nullptr;
  const std::uint8_t* headings = nullptr;
  const std::uint8_t* kinds = nullptr;
  const std::int16_t* vxs = nullptr;
  const std::int16_t* vys = nullptr;
  const std::uint32_t* ticks = nullptr;
  const DensityGrid* grid = nullptr;  ///< never null in a view from SnapshotHistory

  /// The empty frame (baseline of a full snapshot).
  [[nodiscard]] static AgentFrameView empty() noexcept;
  /// A view of `frame` (valid while `frame` is unchanged).
  [[nodiscard]] static AgentFrameView of(const AgentFrame& frame) noexcept;
  /// Copies the view into `out` (an AgentFrame that owns its arrays).
  void copy_to(AgentFrame& out) const;
};

}  // namespace swarmfield::protocol
