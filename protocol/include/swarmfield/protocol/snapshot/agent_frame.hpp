#pragma once
// The agent state one client holds after decoding a snapshot (its "frame"): quantized
// positions, headings and kinds of the agents it tracks, sorted by id, plus the predictor state
// (velocity estimate and tick of the last update) that both ends derive from the same bytes.
// Also the quantization of agent positions used by the snapshot codec (protocol/SNAPSHOTS.md).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/protocol/snapshot/density_grid.hpp"

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

/// One tracked agent as a client holds it: quantized position (1/64 cell, <= kPositionMax),
/// heading (256 steps per turn, protocol::quantize_heading), kind (the server's agent kind table
/// index), and the predictor state (agent_prediction.hpp): velocity in 1/16 position unit per
/// tick and the tick of the agent's last update, i.e. of the last snapshot in the frame's chain
/// that carried its values. Frames are arrays of these rather than parallel arrays because the
/// codec's merge reads and writes every field of an agent together: one memory stream in and one
/// out instead of eight each (measured: decoding a third faster than with parallel arrays).
struct AgentState {
  std::uint32_t id = 0;
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t tick = 0;
  std::int16_t vx = 0;
  std::int16_t vy = 0;
  std::uint8_t heading = 0;
  std::uint8_t kind = 0;

  friend bool operator==(const AgentState&, const AgentState&) = default;
};

/// The agents a client holds after decoding a snapshot, sorted by id (strictly increasing).
struct AgentFrame {
  std::uint32_t sequence = 0;  ///< snapshot sequence that produced this frame
  std::uint32_t tick = 0;      ///< world tick of that snapshot
  std::vector<AgentState> agents;
  /// Density of the agents the client does not track (empty when not sent).
  DensityGrid grid;

  [[nodiscard]] std::size_t size() const noexcept { return agents.size(); }
  void clear() noexcept {
    agents.clear();
    grid.clear();
  }
  /// Same agents and values (predictor state and grid included), sequence and tick too.
  friend bool operator==(const AgentFrame&, const AgentFrame&) = default;
};

/// Read-only view of a frame: of an AgentFrame, or of one stored in a SnapshotHistory (pointing
/// into its pool, valid until its next store()).
struct AgentFrameView {
  std::uint32_t sequence = 0;
  std::uint32_t tick = 0;
  std::span<const AgentState> agents;
  const DensityGrid* grid = nullptr;  ///< never null in a view from of(), empty() or SnapshotHistory

  [[nodiscard]] std::size_t size() const noexcept { return agents.size(); }
  /// The empty frame (baseline of a full snapshot).
  [[nodiscard]] static AgentFrameView empty() noexcept;
  /// A view of `frame` (valid while `frame` is unchanged).
  [[nodiscard]] static AgentFrameView of(const AgentFrame& frame) noexcept;
  /// Copies the view into `out` (an AgentFrame that owns its agents).
  void copy_to(AgentFrame& out) const;
};

}  // namespace swarmfield::protocol
