#include "swarmfield/server/map_source.hpp"

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/city_generator.hpp"

namespace swarmfield::server {

bool load_map(const ServerConfig& config, sim::GridMap& map, std::string& name, std::string& error,
              std::vector<sim::CellCoord>* spawns) {
  if (!config.map_path.empty()) {
    sim::MapError map_error;
    if (!io::read_map_file(config.map_path, map, map_error, spawns)) {
      error = "can not load map: " + map_error.to_string();
      return false;
    }
    const auto slash = config.map_path.find_last_of('/');
    name = slash == std::string::npos ? config.map_path : config.map_path.substr(slash + 1);
  } else {
    sim::CityParams params;
    params.width = static_cast<std::int32_t>(config.city_size);
    params.height = static_cast<std::int32_t>(config.city_size);
    params.seed = config.city_seed;
    map = sim::generate_city(params);
    name = "city-seed-" + std::to_string(config.city_seed) + "-" + std::to_string(config.city_size);
  }
  if (map.walkable_count() == 0) {
    error = "map '" + name + "' has no walkable cell";
    return false;
  }
  return true;
}

}  // namespace swarmfield::server
