// Integration field: the passes of a sweeping build (unit-cost maps, whole builds): the start,
// the row sweeps in pairs, the check and conversion to search words, and the Dijkstra pass
// from the cells the check found wrong. The row primitives are in integration_sweep.cpp.
#include "swarmfield/sim/nav/field/integration_field.hpp"

#include "integration_search.hpp"
#include "integration_sweep.hpp"

#include <algorithm>
#include <array>

namespace swarmfield::sim {

namespace {

using detail::initial_seed_capacity;
using detail::kBlockedWord;
using detail::kUnreached;

}  // namespace

/// Sweep words (infinity but the goals), flags for the rows beside the goals, goal rows
/// settled along themselves; phase kSweep.
void IntegrationField::start_sweeps() {
  const auto w = static_cast<std::size_t>(width_);
  const auto h = static_cast<std::size_t>(height_);
  const std::size_t pw = w + 2;
  const std::size_t ph = h + 2;
  std::uint32_t* word = words();
  swept_ = true;
  sweep_vector_ = method_ != Method::kSweepsScalar && detail::sweep_vector_supported();
  if (sweep_scratch_.size() < detail::sweep_scratch_words(w)) sweep_scratch_.resize(detail::sweep_scratch_words(w));
  if (seeds_.capacity() < initial_seed_capacity(w, h)) seeds_.reserve(initial_seed_capacity(w, h));
  std::fill(padded_values_.begin(), padded_values_.end(), detail::kSweepInfinity);
  chunk_words_ = detail::sweep_chunk_words(w);
  need_down_.assign(ph * chunk_words_, 0);
  need_up_.assign(ph * chunk_words_, 0);
  touched_.resize(3 * chunk_words_);
  const std::size_t chunks = (pw + 15) / 16;
  for (const std::uint32_t p : goal_cells_) {
    const std::size_t y = p / pw;
    word[p] = 0;
    // Every chunk of the rows either side (a goal row is settled along its whole length).
    for (std::size_t k = 0; k < chunks; ++k) {
      need_down_[(y + 1) * chunk_words_ + k / 64] |= std::uint64_t{1} << (k % 64);
      need_up_[(y - 1) * chunk_words_ + k / 64] |= std::uint64_t{1} << (k % 64);
    }
  }
  // Goal rows: consistent along themselves before any sweep (sweep_row's precondition).
  const detail::SweepGrid grid{word, open_flags(), w, h};
  for (std::size_t y = 1; y <= h; ++y) {
    if (need_down_[(y + 1) * chunk_words_] != 0) detail::settle_row(grid, y);
  }
  sweep_visit_limit_ = kSweepVisitFactor * (walkable_ / 16 + chunks);
  sweep_visits_ = 0;
  sweep_down_ = true;
  sweep_row_ = 0;
  sweep_pending_ = false;
  check_row_ = 1;
  seed_pos_ = 0;
  ring_fill_ = {};
  phase_ = Phase::kSweep;
}

// ---- sweeps (unit costs, whole builds) ----------------------------------------------------------

/// Sweeps rows while less than `budget` units were spent in this call, a pair (down, up) at
/// a time, skipping the rows whose neighbour on the side swept from has not changed since they
/// last took from it (such a row cannot change). Hands over to the check once a pair changed
/// nothing (the field is then exact; the check confirms it) or after kMaxSweepPairs pairs
/// (mazes, whose paths turn up and down many times; the check and the Dijkstra pass finish).
void IntegrationField::run_sweeps(std::size_t budget) {
  const detail::SweepGrid grid{words(), open_flags(), static_cast<std::size_t>(width_), static_cast<std::size_t>(height_)};
  const auto w = static_cast<std::size_t>(width_);
  const auto h = static_cast<std::size_t>(height_);
  const std::size_t cw = chunk_words_;
  const std::size_t chunks = (w + 2 + 15) / 16;
  // The last word's chunks past the row stay clear.
  const std::uint64_t last_word = chunks % 64 == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << (chunks % 64)) - 1;
  std::uint64_t spent = 0;
  while (phase_ == Phase::kSweep && spent < budget) {
    const auto done = static_cast<std::size_t>(sweep_row_);
    const std::size_t y = sweep_down_ ? done + 1 : h - done;
    std::uint64_t* need = (sweep_down_ ? need_down_.data() : need_up_.data()) + y * cw;
    ++spent;  // a skipped row
    std::size_t visits = 0;
    for (std::size_t i = 0; i < cw; ++i) visits += static_cast<std::size_t>(__builtin_popcountll(need[i]));
    if (visits != 0) {
      sweep_visits_ += visits;
      if (sweep_visits_ > sweep_visit_limit_ && method_ == Method::kAuto) {
        // Paths that turn up and down many times (a maze): the wavefront is faster here.
        // Start it afresh from the walkable flags; the work so far stays counted.
        swept_ = false;
        work_units_ += spent;
        start_wavefront();
        return;
      }
      const std::size_t from = sweep_down_ ? y - 1 : y + 1;
      const bool changed = detail::sweep_row(grid, y, from, need, touched_.data(), sweep_scratch_.data(), sweep_vector_);
      std::fill(need, need + cw, std::uint64_t{0});
      if (changed) {
        // The rows either side take from cells x - 1..x + 1: a chunk whose first (last) lane
        // changed concerns the chunk before (after) it too.
        std::uint64_t* below = need_down_.data() + (y + 1) * cw;
        std::uint64_t* above = need_up_.data() + (y - 1) * cw;
        const std::uint64_t* first = touched_.data() + cw;
        const std::uint64_t* last = touched_.data() + 2 * cw;
        for (std::size_t i = 0; i < cw; ++i) {
          std::uint64_t near = touched_[i] | (last[i] << 1) | (first[i] >> 1);
          if (i > 0) near |= last[i - 1] >> 63;
          if (i + 1 < cw) near |= first[i + 1] << 63;
          if (i + 1 == cw) near &= last_word;
          below[i] |= near;
          above[i] |= near;
        }
        sweep_pending_ = true;
      }
      spent += kSweepChunkWorkUnits * visits;
    }
    if (++sweep_row_ < height_) continue;
    sweep_row_ = 0;
    ++sweeps_done_;
    if (sweep_down_) {
      sweep_down_ = false;
      continue;
    }
    sweep_down_ = true;
    if (!sweep_pending_ || sweeps_done_ >= 2 * sweep_pair_limit_) {
      // Converged: no cell can be lowered by a neighbour (each row took from both rows beside
      // it after their last change, and is consistent along itself), so the values are exact
      // and the check is skipped. Stopped by the limit: the check finds what is left.
      sweeps_converged_ = !sweep_pending_;
      phase_ = Phase::kCheck;
      check_row_ = 1;
    }
    sweep_pending_ = false;
  }
  work_units_ += spent;
}

/// Checks rows (collecting the cells some neighbour can still lower) and, one row behind,
/// turns sweep words into search words and values; the last row sorts the wrong cells and
/// hands over to the Dijkstra pass.
void IntegrationField::run_check(std::size_t budget) {
  const detail::SweepGrid grid{words(), open_flags(), static_cast<std::size_t>(width_), static_cast<std::size_t>(height_)};
  const auto w = static_cast<std::size_t>(width_);
  // Converting a row is two linear passes; checking it, two more.
  const std::uint64_t row_units = (sweeps_converged_ ? 2 : 4) * linear_work_units(w + 2);
  std::uint64_t spent = 0;
  while (phase_ == Phase::kCheck && spent < budget) {
    const auto y = static_cast<std::size_t>(check_row_);
    if (!sweeps_converged_ && y <= static_cast<std::size_t>(height_)) {
      std::size_t count = seeds_.size();
      if (seeds_.capacity() < count + w) seeds_.reserve(2 * (count + w));  // rare: see initial_seed_capacity
      seeds_.resize(count + w);
      static_cast<void>(detail::check_row(grid, y, seeds_.data(), count, sweep_vector_));
      seeds_.resize(count);
    }
    // Row y - 1 is no longer read by the check: convert it (and, after the last row, the
    // last map row and the bottom border too).
    reachable_count_ += detail::convert_row(grid, y - 1);
    if (y == static_cast<std::size_t>(height_) + 1) {
      static_cast<void>(detail::convert_row(grid, y));  // the bottom border: nothing finite
      std::sort(seeds_.begin(), seeds_.end());
      seed_pos_ = 0;
      current_ = 0;
      read_pos_ = 0;
      ring_fill_ = {};
      phase_ = Phase::kCorrect;
    }
    ++check_row_;
    spent += row_units;
  }
  work_units_ += spent;
}

/// Dijkstra from the cells the check found wrong, each entering the queue at its offer when
/// the search reaches that bucket (the same three-bucket ring as run_ring_search(), with every
/// legal neighbour relaxed: the arrival directions are not known here). A cell is final when
/// its bucket is drained, and its value is written then. Exact: afterwards no cell can be
/// lowered by any neighbour, and every value is the length of a path.
void IntegrationField::run_correction(std::size_t budget) {
  constexpr std::uint32_t kW = kOrthogonalStep;
  std::uint32_t* const word = words();
  const auto s = static_cast<std::ptrdiff_t>(width_) + 2;
  const auto us = static_cast<std::uint32_t>(s);
  const std::array<std::ptrdiff_t, 8> offset = {1, s + 1, s, s - 1, -1, -s - 1, -s, -s + 1};
  std::size_t settled = 0;
  const auto enqueue = [&](std::size_t slot, std::uint32_t cell) {
    reserve_ring(slot, 1);
    ring_[slot][ring_fill_[slot]++] = cell;
  };
  for (;;) {
    const std::size_t s0 = current_ % 3;
    while (seed_pos_ < seeds_.size()) {
      const auto offer = static_cast<std::uint32_t>(seeds_[seed_pos_] >> 32);
      if (offer / kW > current_) break;
      const auto cell = static_cast<std::uint32_t>(seeds_[seed_pos_] & 0xFFFFFFFFu);
      ++seed_pos_;
      if (offer + 1 < word[cell]) {
        reachable_count_ += word[cell] == kUnreached ? 1u : 0u;
        word[cell] = offer + 1;
        enqueue(s0, cell);
      }
    }
    if (read_pos_ >= ring_fill_[s0]) {
      ring_fill_[s0] = 0;
      read_pos_ = 0;
      if (ring_fill_[(current_ + 1) % 3] == 0 && ring_fill_[(current_ + 2) % 3] == 0) {
        if (seed_pos_ == seeds_.size()) break;  // done
        current_ = static_cast<std::uint32_t>(seeds_[seed_pos_] >> 32) / kW;
      } else {
        ++current_;
      }
      continue;
    }
    if (settled >= budget) {
      work_units_ += settled;
      return;
    }
    const std::uint32_t u = ring_[s0][read_pos_++];
    const std::uint32_t d = word[u];
    const std::uint32_t lo = current_ * kW + 1;
    if (d - lo >= kW) continue;  // stale
    ++settled;
    const bool e = word[u + 1] != kBlockedWord, so = word[u + us] != kBlockedWord;
    const bool wv = word[u - 1] != kBlockedWord, n = word[u - us] != kBlockedWord;
    const std::array<bool, 8> legal = {true, e && so, true, wv && so, true, wv && n, true, e && n};
    for (std::size_t k = 0; k < 8; ++k) {
      if (!legal[k]) continue;
      const auto nbr = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(u) + offset[k]);
      const std::uint32_t nd = d + ((k & 1) != 0 ? kDiagonalStep : kW);
      const std::uint32_t old = word[nbr];
      if (nd >= old) continue;  // also every blocked cell (word 0)
      reachable_count_ += old == kUnreached ? 1u : 0u;
      word[nbr] = nd;
      enqueue((current_ + (nd - lo) / kW) % 3, nbr);
    }
  }
  work_units_ += settled;
  phase_ = Phase::kIdle;
}

}  // namespace swarmfield::sim
