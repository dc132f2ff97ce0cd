#pragma once
// Row sweeps of the integration field on unit-cost maps (internal to IntegrationField).
//
// A whole-map integration field is the fixed point of v(c) = min over legal neighbours n of
// v(n) + step(n -> c), v(goal) = 0. Relaxing the cells in raster order (Gauss-Seidel) reaches
// it in a few passes on street maps: a downward sweep (rows top to bottom, each row taking
// the row above and then its own row both ways) settles every cell whose shortest path never
// goes up, an upward sweep the mirror case, and each further pair of sweeps one more change
// of vertical direction along the paths (the "fast sweeping" idea of Zhao 2005, "A fast
// sweeping method for Eikonal equations", on the octile graph instead of a PDE). Unlike a
// Dijkstra wavefront, a sweep reads memory in order and does each row's work with SIMD: the
// horizontal part of a row is a segmented min-plus prefix scan (Hillis & Steele 1986, with
// blocked cells ending the segments). What the sweeps leave unfinished is found by a check
// pass (a cell whose value is above some neighbour's value plus the step) and finished by a
// short Dijkstra from those cells (IntegrationField), so the result is exact whatever the
// number of sweeps.
//
// Sweep words: the integration's padded search buffer ((w + 2) x (h + 2) words, one-cell
// border, row-major) holding the value in 1/985 units, kSweepInfinity for blocked and not yet
// reached cells (blocked ones are told apart by the walkable flags). Values stay below
// kSweepInfinity - 16 * kDiagonalStep (IntegrationField checks the bound), so adding a step
// or a 16-cell ramp never wraps.
#include <cstddef>
#include <cstdint>

namespace swarmfield::sim::detail {

inline constexpr std::uint32_t kSweepInfinity = 0x7FFFFFFFu;
/// Readable words (and flags) before the first and after the last padded cell: the vector
/// code loads 16 cells from x - 1 and x + 1.
inline constexpr std::size_t kSweepSlack = 32;

/// One build's buffers as the sweeps see them. `words` and `open` point at padded cell
/// (0, 0); kSweepSlack elements before and after the (w + 2) x (h + 2) grid are readable.
struct SweepGrid {
  std::uint32_t* words = nullptr;
  const std::uint8_t* open = nullptr;  ///< 1 walkable, 0 blocked (border included)
  std::size_t width = 0;               ///< map cells per row (w)
  std::size_t height = 0;              ///< map rows (h)
  [[nodiscard]] std::size_t stride() const noexcept { return width + 2; }
};

/// Scratch words sweep_row() needs for a grid of `width` cells a row.
[[nodiscard]] std::size_t sweep_scratch_words(std::size_t width) noexcept;
/// 64-bit words of a bitset over a row's chunks (16 cells each, from padded x = 0).
[[nodiscard]] std::size_t sweep_chunk_words(std::size_t width) noexcept;

/// Sweeps padded row `y` (1..height) from padded row `from` (y - 1 going down, y + 1 going
/// up): each walkable cell of the chunks in `visit` (a bitset, sweep_chunk_words(width) words)
/// takes the best of its value and the three cells of `from` it can step from, then the
/// row's runs of walkable cells are relaxed left-to-right and right-to-left from the cells
/// that step lowered. Preconditions: the row is consistent along itself (no cell lowered by
/// its left or right neighbour; all-infinity rows are, and settle_row() and sweep_row() leave
/// a row so), and cells outside the chunks in `visit` cannot be lowered from `from` (their
/// three chunks of `from` did not change since they last took from it). Sets `touched` (three
/// bitsets of sweep_chunk_words(width) words) to the chunks whose cells went down, those whose
/// first lane did, and those whose last lane did; returns true when a cell went down. `scratch` holds
/// sweep_scratch_words(width) words. `vector`: the AVX-512 code (the caller checked the CPU);
/// the same row and `touched` either way.
bool sweep_row(const SweepGrid& grid, std::size_t y, std::size_t from, const std::uint64_t* visit,
               std::uint64_t* touched, std::uint32_t* scratch, bool vector) noexcept;

/// Relaxes padded row `y` along itself, both ways (after goals were put in it).
void settle_row(const SweepGrid& grid, std::size_t y) noexcept;

/// Checks padded row `y` (1..height; reads rows y - 1..y + 1 as sweep words): each walkable
/// cell whose value exceeds the best offer of a neighbour (its value plus the step, under the
/// corner rule) is appended to `seeds` as offer << 32 | padded cell index (so sorting them
/// sorts by offer); `seeds` has room for `width` more entries past `count`. Returns the number
/// of walkable cells with a finite value. Same result with `vector` (AVX-512) or not.
std::size_t check_row(const SweepGrid& grid, std::size_t y, std::uint64_t* seeds, std::size_t& count,
                      bool vector) noexcept;

/// Row `y` (0..height + 1) of sweep words into search words (IntegrationField::search_words():
/// 0 blocked, kSearchUnreached, value + 1), in place; returns how many are finite.
std::size_t convert_row(const SweepGrid& grid, std::size_t y) noexcept;

/// True when this CPU runs the AVX-512 sweep code (F + BW + VL).
[[nodiscard]] bool sweep_vector_supported() noexcept;

}  // namespace swarmfield::sim::detail
