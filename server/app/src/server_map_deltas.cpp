// Map deltas (protocol MapDelta, TCP): clients learn the barricades built, worn and fallen, so
// viewers draw them and their local flow overlays plan on the map the horde sees. Sent at the
// end of every tick that changed the map (rare: builds and a few steps of each barricade's
// health), and in full to a client that just got the map.
#include <algorithm>

#include "swarmfield/server/server.hpp"

namespace swarmfield::server {

namespace {

protocol::MapCellChange cell_change(sim::CellCoord cell, std::uint8_t cost, std::uint8_t health) {
  protocol::MapCellChange c;
  c.x = static_cast<std::uint16_t>(cell.x);
  c.y = static_cast<std::uint16_t>(cell.y);
  c.cost = cost;
  c.barricade = health;
  return c;
}

// Health as a fraction of full in 1..255 (the MapCellChange convention).
std::uint8_t health_fraction(const sim::Barricade& b) {
  const float f = b.full_health > 0.0f ? std::clamp(b.health / b.full_health, 0.0f, 1.0f) : 1.0f;
  return static_cast<std::uint8_t>(std::clamp(static_cast<int>(f * 255.0f + 0.999f), 1, 255));
}

}  // namespace

std::vector<Frame> Server::map_delta_frames(std::span<const protocol::MapCellChange> cells) {
  std::vector<Frame> frames;
  for (std::size_t at = 0; at < cells.size(); at += protocol::kMaxMapDeltaCells) {
    protocol::MapDelta delta;
    delta.revision = ++map_revision_;
    const std::size_t end = std::min(cells.size(), at + protocol::kMaxMapDeltaCells);
    delta.cells.assign(cells.begin() + static_cast<std::ptrdiff_t>(at), cells.begin() + static_cast<std::ptrdiff_t>(end));
    if (Frame frame = make_frame(delta)) frames.push_back(std::move(frame));
  }
  return frames;
}

void Server::send_map_deltas() {
  const std::span<const sim::BarricadeChange> changes = world_.barricade_changes();
  if (changes.empty()) return;
  map_cells_scratch_.clear();
  for (const sim::BarricadeChange& ch : changes) map_cells_scratch_.push_back(cell_change(ch.cell, ch.cost, ch.health));
  world_.clear_barricade_changes();
  const std::vector<Frame> frames = map_delta_frames(map_cells_scratch_);
  for (const auto& [id, sid] : session_of_client_) {
    TcpSession* session = tcp_.find(sid);
    if (session == nullptr || !session->is_open()) continue;
    for (const Frame& frame : frames) {
      if (tcp_.send(*session, frame) != TcpSession::SendResult::kQueued) break;
    }
  }
  map_deltas_sent_ += frames.size();
}

bool Server::send_barricades(TcpSession& session) {
  const std::span<const sim::Barricade> barricades = world_.barricades();
  if (barricades.empty()) return true;
  map_cells_scratch_.clear();
  for (const sim::Barricade& b : barricades) {
    map_cells_scratch_.push_back(cell_change(b.cell, sim::kBlockedCost, health_fraction(b)));
  }
  for (const Frame& frame : map_delta_frames(map_cells_scratch_)) {
    if (tcp_.send(session, frame) != TcpSession::SendResult::kQueued) return false;
  }
  return true;
}

}  // namespace swarmfield::server
