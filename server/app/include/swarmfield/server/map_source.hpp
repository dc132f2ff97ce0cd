#pragma once
// The map the server runs on: a map file (--map: .map, .tmj or .png, io::read_map_file) or the
// procedural city (--city-seed, --city-size).
#include <string>

#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::server {

/// Loads or generates the map named by `config`. `name` gets the label sent to clients (the
/// file's base name or "city-seed-N-SIZE"). False + one-line `error` (file, line, reason) when
/// the file can not be read or parsed, or the map has no walkable cell.
/// `spawns` (when given) gets the file's spawn cells (Tiled spawn tiles, red PNG pixels; none for
/// text maps and the generated city).
[[nodiscard]] bool load_map(const ServerConfig& config, sim::GridMap& map, std::string& name, std::string& error,
                            std::vector<sim::CellCoord>* spawns = nullptr);

}  // namespace swarmfield::server
