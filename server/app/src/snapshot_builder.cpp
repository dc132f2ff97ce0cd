#include "swarmfield/server/snapshot_builder.hpp"

#include <algorithm>
#include <cmath>

namespace swarmfield::server {

void SnapshotWorldState::assign(const AgentArrays& arrays, std::span<const sim::Player> world_players,
                                std::uint32_t world_tick, std::uint64_t rebuild_count, float map_cell_size) {
  tick = world_tick;
  rebuilds = rebuild_count;
  relevances_used_ = 0;
  work_ = 0;
  cell_size = map_cell_size;
  agents.assign(arrays.ids, arrays.xs, arrays.ys, arrays.headings, arrays.kinds, map_cell_size);
  players.clear();
  for (const sim::Player& p : world_players) {
    const bool aimed = p.aim.x != 0.0f || p.aim.y != 0.0f;
    players.push_back(protocol::PlayerState{p.id, p.position.x, p.position.y, p.contacts, p.health, p.kills, p.shots, 0,
                                            aimed ? protocol::quantize_heading(std::atan2(p.aim.y, p.aim.x)) : std::uint8_t{0}});
  }
  std::sort(players.begin(), players.end(),
            [](const protocol::PlayerState& a, const protocol::PlayerState& b) { return a.id < b.id; });
  if (players.size() > protocol::kMaxSnapshotPlayers) players.resize(protocol::kMaxSnapshotPlayers);
}

void SnapshotWorldState::assign(const sim::World& world) {
  const sim::Swarm& swarm = world.swarm();
  // Far agents move in steps of 2 or 4 ticks: they are shown one step late on the line of their
  // last step (Swarm::shown_positions), so the viewers' predictor meets the motion it predicts.
  const bool shown = swarm.shown_positions(shown_xs_, shown_ys_);
  const std::span<const float> xs = shown ? std::span<const float>(shown_xs_) : swarm.xs();
  const std::span<const float> ys = shown ? std::span<const float>(shown_ys_) : swarm.ys();
  assign(AgentArrays{swarm.ids(), xs, ys, swarm.headings(), swarm.kinds()}, world.players(),
         static_cast<std::uint32_t>(world.tick()), world.rebuild_count(), world.map().cell_size());
  set_map_size(world.map().width(), world.map().height());
}

void SnapshotWorldState::set_map_size(std::int32_t width_cells, std::int32_t height_cells) noexcept {
  constexpr std::int64_t kCell = protocol::kPositionUnitsPerCell;
  map_bounds =
      protocol::QuantizedRect{0, 0, (std::int64_t{width_cells} + 1) * kCell, (std::int64_t{height_cells} + 1) * kCell};
}

protocol::QuantizedRect SnapshotWorldState::sent_area(const protocol::QuantizedRect& view) const noexcept {
  const protocol::QuantizedRect shared = protocol::snap_view(view, agents.tile_shift, map_bounds);
  if (shared.empty()) return {};
  if (map_bounds.empty()) return view;
  protocol::QuantizedRect r = view;
  if (shared.x0 <= map_bounds.x0 || r.x0 < shared.x0) r.x0 = shared.x0;
  if (shared.y0 <= map_bounds.y0 || r.y0 < shared.y0) r.y0 = shared.y0;
  if (shared.x1 >= map_bounds.x1 || r.x1 > shared.x1) r.x1 = shared.x1;
  if (shared.y1 >= map_bounds.y1 || r.y1 > shared.y1) r.y1 = shared.y1;
  return r;
}

const protocol::ViewRelevance& SnapshotWorldState::relevance(const protocol::QuantizedRect& view,
                                                             const protocol::RelevanceParams& params) {
  const protocol::QuantizedRect snapped = protocol::snap_view(view, agents.tile_shift, map_bounds);
  for (std::size_t i = 0; i < relevances_used_; ++i) {
    const protocol::ViewRelevance& r = *relevances_[i];
    const protocol::QuantizedRect& v = r.view();
    if (v == snapped &&
        r.max_tracked() == params.max_tracked && r.density_grid() == params.density_grid) {
      return r;
    }
  }
  // The bound (see the header): the first relevance is always computed, so there is one to share.
  const std::size_t tiles = std::size_t{agents.tiles_x} * agents.tiles_y;
  const std::size_t work_limit = kRelevanceWorkPerTick * (agents.size() + tiles);
  if (relevances_used_ > 0 && (relevances_used_ >= kMaxRelevancesPerTick || work_ >= work_limit)) {
    return best_cover(sent_area(view));
  }
  if (relevances_used_ == relevances_.size()) relevances_.push_back(std::make_unique<protocol::ViewRelevance>());
  protocol::ViewRelevance& r = *relevances_[relevances_used_++];
  r.compute(agents, snapped, params, scratch_);
  work_ += r.in_view() + tiles_overlapped(snapped);
  return r;
}

std::size_t SnapshotWorldState::tiles_overlapped(const protocol::QuantizedRect& r) const noexcept {
  if (r.empty() || agents.tiles_x == 0 || agents.tiles_y == 0 || r.x1 <= 0 || r.y1 <= 0) return 0;
  auto span = [&](std::int64_t lo, std::int64_t hi, std::uint32_t tiles) -> std::size_t {
    const std::int64_t t0 = std::max<std::int64_t>(lo, 0) >> agents.tile_shift;
    const std::int64_t t1 = std::min<std::int64_t>((hi - 1) >> agents.tile_shift, std::int64_t{tiles} - 1);
    return t1 < t0 ? 0 : static_cast<std::size_t>(t1 - t0 + 1);
  };
  return span(r.x0, r.x1, agents.tiles_x) * span(r.y0, r.y1, agents.tiles_y);
}

const protocol::ViewRelevance& SnapshotWorldState::best_cover(const protocol::QuantizedRect& view) const noexcept {
  // The smallest computed rectangle containing the view; else the largest overlap. Ties: the
  // earliest (deterministic).
  std::size_t best = 0;
  bool best_contains = false;
  std::int64_t best_area = 0;  // containing: the rectangle's area; else: the overlap's
  for (std::size_t i = 0; i < relevances_used_; ++i) {
    const protocol::QuantizedRect& v = relevances_[i]->view();
    const bool c = protocol::contains(v, view);
    const std::int64_t area = c ? (v.x1 - v.x0) * (v.y1 - v.y0) : protocol::intersection_area(v, view);
    const bool better = i == 0 || (c && !best_contains) || (c && best_contains && area < best_area) ||
                        (!c && !best_contains && area > best_area);
    if (better) {
      best = i;
      best_contains = c;
      best_area = area;
    }
  }
  return *relevances_[best];
}

namespace {
/// The precision a view's snapshots need (protocol::view_precision_shift): from the larger side
/// of its area (view + margin) within the map, in cells.
std::uint8_t precision_shift(const protocol::QuantizedRect& area, const protocol::QuantizedRect& bounds) noexcept {
  const protocol::QuantizedRect r = protocol::clip(area, bounds);
  if (r.empty()) return 0;
  const std::int64_t extent = std::max(r.x1 - r.x0, r.y1 - r.y0);
  return protocol::view_precision_shift(static_cast<float>(extent) / static_cast<float>(protocol::kPositionUnitsPerCell));
}
}  // namespace

ClientSnapshotStream::ClientSnapshotStream(const ClientSnapshotParams& params)
    : params_(params),
      sender_(params.history_agents, false, params.history_pool),
      budget_(params.bits_per_second, params.snapshots_per_second) {}

protocol::QuantizedRect ClientSnapshotStream::area(const SnapshotWorldState& world, const ViewRect& view) const noexcept {
  return view.empty() ? protocol::QuantizedRect{}
                      : protocol::quantize_view(view.x0, view.y0, view.x1, view.y1, params_.margin, world.cell_size);
}

protocol::RelevanceParams ClientSnapshotStream::relevance_params() const noexcept {
  protocol::RelevanceParams relevance;
  relevance.max_tracked = params_.max_tracked;
  relevance.update_bits = budget_.update_bits();
  relevance.add_bits = budget_.add_bits();
  return relevance;
}

void ClientSnapshotStream::prepare(SnapshotWorldState& world, const ViewRect& view) {
  static_cast<void>(world.relevance(area(world, view), relevance_params()));
}

bool ClientSnapshotStream::build(SnapshotWorldState& world, const ViewRect& view, std::uint64_t echo_client_time_us,
                                 std::vector<std::uint8_t>& payload) {
  const protocol::RelevanceParams relevance = relevance_params();
  // What the snapshot costs besides agents: header, players, the two length fields, and a
  // density grid about as large as the last one (its changes are what is coded).
  const double fixed = static_cast<double>(protocol::kSnapshotHeaderBytes + 8 +
                                           world.players.size() * protocol::kSnapshotPlayerBytes + last_grid_bytes_);
  // The shared relevance holds a rectangle around the client's own; the client takes its own
  // rectangle of it, edges near the map's border taken to the border (SnapshotWorldState's rule 1).
  const protocol::QuantizedRect own = area(world, view);
  // The candidates are the shared relevance's own list (no copy per client) and this client's
  // send flags.
  const protocol::CandidateSelection chosen =
      selector_.choose(world.relevance(own, relevance), world.sent_area(own), sender_.next_baseline(), world.tick,
                       budget_.allowance(fixed), relevance, grid_);
  header_.precision_shift = params_.view_precision ? precision_shift(own, world.map_bounds) : 0;
  header_.tick = world.tick;
  header_.echo_client_time_us = echo_client_time_us;
  header_.total_agents = static_cast<std::uint32_t>(world.agents.size());
  header_.rebuilds = world.rebuilds;
  header_.players = world.players;
  header_.wave = world.wave;
  sender_.set_recent_deaths(world.recent_deaths);
  if (!sender_.encode(header_, chosen, grid_, payload)) return false;
  budget_.spent(payload.size(), sender_.last_stats());
  last_grid_bytes_ = (sender_.last_stats().grid_bits + 7) / 8;
  return true;
}

std::vector<protocol::KindInfo> kind_infos(std::span<const sim::AgentKind> kinds) {
  std::vector<protocol::KindInfo> out;
  for (const sim::AgentKind& k : kinds) {
    if (out.size() == protocol::kMaxKinds) break;
    out.push_back({k.name, k.radius, k.colour});
  }
  return out;
}

}  // namespace swarmfield::server
