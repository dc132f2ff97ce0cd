// NavigationFields: rebuild the integration + flow pair only when its inputs changed, all at
// once or time-sliced behind a complete front pair.
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

#include "swarmfield/sim/worker_pool.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace swarmfield::sim {

namespace {

std::uint64_t row_units(std::int32_t width) noexcept {
  return linear_work_units(static_cast<std::uint64_t>(std::max(width, 0)));
}

}  // namespace

bool NavigationFields::same_inputs(const FieldSet& set, const GridMap& map, std::span<const CellCoord> goals) noexcept {
  return map.revision() == set.map_revision &&
         std::equal(goals.begin(), goals.end(), set.goals.begin(), set.goals.end());
}

void NavigationFields::build_front_now(const GridMap& map, std::span<const CellCoord> goals) {
  back_active_ = false;  // abandoned, if any
  front_.goals.assign(goals.begin(), goals.end());
  front_.map_revision = map.revision();
  front_.integration.build(map, goals);
  const std::int32_t h = front_.integration.height();
  if (pool_ != nullptr && pool_->threads() > 1) {
    front_.flow.build_rows(front_.integration, 0, 0);  // sizes the field before rows go parallel
    constexpr std::size_t kRowsPerChunk = 64;
    pool_->parallel_for(static_cast<std::size_t>(std::max(h, 0)), kRowsPerChunk, [&](std::size_t y0, std::size_t y1, std::size_t) {
      front_.flow.build_rows(front_.integration, static_cast<std::int32_t>(y0), static_cast<std::int32_t>(y1));
    });
  } else {
    front_.flow.build_rows(front_.integration, 0, h);
  }
  last_work_ += front_.integration.work_units() + row_units(front_.integration.width()) *
                                                      static_cast<std::uint64_t>(front_.integration.height());
  if (any_angle_) {
    constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
    bool ready = false;
    last_work_ += advance_table(front_, kNoLimit, ready);
    last_work_ += front_.angle.begin(front_.integration, front_.goals, any_angle_range_);
    last_work_ += front_.angle.advance(front_.flow, table_, kNoLimit);
  }
  valid_ = true;
  ++started_;
  ++rebuilds_;
  if (budget_ > 0) {
    // Time slicing will need the second pair: allocate it now rather than in a later tick.
    // Only what the front's way of searching needed (a sweeping map keeps sweeping; a build
    // that turns to the wavefront allocates its queue then, once).
    back_.integration.reserve(map.width(), map.height(),
                              front_.integration.last_build_swept() ? IntegrationField::Searches::kSweeps
                                                                    : IntegrationField::Searches::kWavefront);
    back_.flow.reserve(map.width(), map.height());
    back_.goals.reserve(front_.goals.capacity());
    if (any_angle_) back_.angle.reserve(map.width(), map.height(), front_.goals.capacity(), any_angle_range_);
  }
}

std::uint64_t NavigationFields::advance_table(const FieldSet& set, std::uint64_t budget, bool& ready) {
  const bool same_snapshot = table_generation_ == generation_ && table_revision_ == set.map_revision &&
                             table_.width() == set.integration.width() && table_.height() == set.integration.height();
  ready = same_snapshot && table_valid_;
  if (ready) return 0;
  if (!same_snapshot || table_.done()) {
    // (Re)start for this snapshot; a table left half-built by an abandoned build is redone.
    table_.begin(set.integration);
    table_revision_ = set.map_revision;
    table_generation_ = generation_;
    table_valid_ = false;
  }
  // Costlier cells block sight (BlockedCountTable::advance), read from the map of this update
  // when it is the snapshot's size (a map changed since then triggers another build anyway).
  const bool costs_match = sight_map_ != nullptr && sight_map_->width() == set.integration.width() &&
                           sight_map_->height() == set.integration.height();
  const std::uint64_t spent = table_.advance(set.integration, budget, costs_match ? sight_map_->costs().data() : nullptr);
  table_valid_ = table_.done();
  ready = table_valid_;
  return spent;
}

void NavigationFields::start_back(const GridMap& map, std::span<const CellCoord> goals) {
  back_.goals.assign(goals.begin(), goals.end());
  back_.map_revision = map.revision();
  back_.flow_row = 0;
  back_.angle_started = false;
  back_.integration.begin(map, goals);
  back_active_ = true;
  ++started_;
}

bool NavigationFields::back_complete() const noexcept {
  return !back_.integration.in_progress() && back_.flow_row >= back_.integration.height() &&
         (!any_angle_ || (back_.angle_started && back_.angle.done()));
}

std::uint64_t NavigationFields::advance_back(std::uint64_t budget) {
  std::uint64_t spent = 0;
  if (back_.integration.in_progress()) {
    const std::uint64_t before = back_.integration.work_units();
    constexpr std::uint64_t kMaxCall = std::numeric_limits<std::size_t>::max();
    back_.integration.advance(static_cast<std::size_t>(std::min(budget, kMaxCall)));
    spent = back_.integration.work_units() - before;
    if (back_.integration.in_progress()) return spent;
  }
  // Flow rows, a whole row at a time while budget is left (the last may overshoot).
  const std::int32_t h = back_.integration.height();
  const std::uint64_t per_row = row_units(back_.integration.width());
  std::int32_t rows = 0;
  std::uint64_t flow_spent = 0;
  while (back_.flow_row + rows < h && spent + flow_spent < budget) {
    ++rows;
    flow_spent += per_row;
  }
  if (rows > 0 || back_.flow_row == 0) {
    back_.flow.build_rows(back_.integration, back_.flow_row, back_.flow_row + rows);  // sizes the field too
  }
  back_.flow_row += rows;
  spent += flow_spent;
  if (!any_angle_ || back_.flow_row < h || spent >= budget) return spent;
  // Any-angle layer: the sight table for this snapshot (usually kept from an earlier build),
  // then the waypoints.
  bool ready = false;
  spent += advance_table(back_, budget - spent, ready);
  if (!ready || spent >= budget) return spent;
  if (!back_.angle_started) {
    spent += back_.angle.begin(back_.integration, back_.goals, any_angle_range_);
    back_.angle_started = true;
    if (spent >= budget) return spent;
  }
  spent += back_.angle.advance(back_.flow, table_, budget - spent);
  return spent;
}

void NavigationFields::swap_back_in() noexcept {
  std::swap(front_, back_);
  back_active_ = false;
  ++rebuilds_;
}

bool NavigationFields::update(const GridMap& map, std::span<const CellCoord> goal_cells) {
  last_work_ = 0;
  sight_map_ = &map;
  const bool front_usable = valid_ && map.width() == front_.integration.width() &&
                            map.height() == front_.integration.height();
  if (!front_usable) {
    build_front_now(map, goal_cells);
    stale_ = false;
    return true;
  }
  if (same_inputs(front_, map, goal_cells)) {
    back_active_ = false;  // nothing to build: abandon any build in progress
    stale_ = false;
    return false;
  }
  if (budget_ == 0) {
    build_front_now(map, goal_cells);
    stale_ = false;
    return true;
  }
  // Time-sliced: finish the build in progress (whatever inputs it has), swap, then start one
  // for the current inputs if they still differ from the front's.
  bool swapped = false;
  std::uint64_t left = budget_;
  if (!back_active_) {
    start_back(map, goal_cells);
    const std::uint64_t snapshot = back_.integration.work_units();
    last_work_ += snapshot;
    left = snapshot >= left ? 0 : left - snapshot;
  }
  while (left > 0) {
    const std::uint64_t spent = advance_back(left);
    last_work_ += spent;
    left = spent >= left ? 0 : left - spent;
    if (!back_complete()) break;
    swap_back_in();
    swapped = true;
    if (same_inputs(front_, map, goal_cells)) break;
    start_back(map, goal_cells);
    const std::uint64_t snapshot = back_.integration.work_units();
    last_work_ += snapshot;
    left = snapshot >= left ? 0 : left - snapshot;
  }
  stale_ = !same_inputs(front_, map, goal_cells);
  return swapped;
}

}  // namespace swarmfield::sim
