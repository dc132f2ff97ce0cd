// Figure 7: a map change in hierarchical mode. What one changed cell costs the navigation
// synchronously (HierarchicalFields::prepare(): SectorGraph::update of the touched sectors, the
// front routes following the new node ids, the touched sectors' fields dropped; the routes are
// then rebuilt time-sliced like a goal change, see hier/route) against the whole graph build a
// map revision cost before (SectorGraph::build), on the procedural city and a MovingAI street map
// tiled, at 1024, 4096 and 8192 cells a side. hier/map_change_renumber/: update() with no cell
// (the renumbering of the whole node and edge arrays alone). hier/graph_pack/: SectorGraph::pack(),
// which an update runs once the room for moved id ranges and edge blocks is nearly used up
// (every ~(edges / 8 + 65536) edges moved). hier/bulk_change/: a 256 x 256 district changed
// twice over between two reads (past the change log: the map's changed blocks are followed).
#include <benchmark/benchmark.h>

#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/map/tiled_map.hpp"
#include "swarmfield/sim/nav/hierarchical/hierarchical_fields.hpp"
#include "setup_or_skip.hpp"

namespace swarmfield::bench {

namespace {

constexpr int kChangeCells = 64;  // cells cycled through: each is walled, then restored

struct ChangeCase {
  std::string label;      // city:N or tiled:<map>xT
  std::int32_t city = 0;  // city side, or 0
  std::string map;        // MovingAI map to tile, when city == 0
  std::int32_t tiles = 1;
};

struct ChangeSetup {
  sim::GridMap map;
  sim::HierarchicalFields fields;
  std::vector<sim::CellCoord> cells;  // walkable street cells, half of them on sector borders
  double graph_build_ms = 0.0;
};

ChangeSetup& setup_for(const ChangeCase& c) {
  static std::map<std::string, std::unique_ptr<ChangeSetup>> cache;
  if (auto it = cache.find(c.label); it != cache.end()) return *it->second;
  auto s = std::make_unique<ChangeSetup>();
  s->map = c.city > 0 ? sim::generate_city({c.city, c.city, 1}) : sim::tiled_map(load_map(c.map), c.tiles);
  const auto t0 = std::chrono::steady_clock::now();
  s->fields.prepare(s->map);
  s->graph_build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const sim::CellCoord goal[1] = {nearest_walkable(s->map, {s->map.width() / 2, s->map.height() / 2})};
  s->fields.update(s->map, goal);  // front routes, as a running server has them
  std::mt19937_64 rng(5);
  const std::int32_t side = s->fields.graph().sector_side();
  for (int tries = 0; static_cast<int>(s->cells.size()) < kChangeCells && tries < 1000000; ++tries) {
    sim::CellCoord p{static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(s->map.width())),
                     static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(s->map.height()))};
    if (s->cells.size() % 2 == 0) p.x = (p.x / side) * side + side - 1;  // the east column of a sector
    if (s->map.walkable(p)) s->cells.push_back(p);
  }
  return *cache.emplace(c.label, std::move(s)).first->second;
}

template <class Body>
void run_change(benchmark::State& state, const ChangeCase& c, Body&& body) {
  ChangeSetup* s = setup_or_skip(state, [&]() -> ChangeSetup& { return setup_for(c); });
  if (s == nullptr) return;
  body(state, *s);
  state.counters["side"] = static_cast<double>(s->map.width());
  state.counters["sectors"] = static_cast<double>(s->fields.graph().sector_count());
  state.counters["nodes"] = static_cast<double>(s->fields.graph().portal_count());
  state.counters["edges"] = static_cast<double>(s->fields.graph().edge_count());
}

void register_change_case(const ChangeCase& c, int big) {
  auto* change = benchmark::RegisterBenchmark(("hier/map_change/" + c.label).c_str(), [c](benchmark::State& state) {
    run_change(state, c, [](benchmark::State& st, ChangeSetup& s) {
      std::size_t i = 0, recomputed = 0, changes = 0;
      const std::uint64_t updates_before = s.fields.graph_updates(), builds_before = s.fields.graph_builds();
      for (auto _ : st) {
        // A wall on the cell, and the next time the street again (walls added and removed).
        const sim::CellCoord p = s.cells[(i / 2) % s.cells.size()];
        s.map.set_cost(p.x, p.y, i % 2 == 0 ? sim::kBlockedCost : sim::kDefaultCost);
        s.fields.prepare(s.map);
        recomputed += s.fields.graph().updated_sectors().size();
        ++changes;
        ++i;
      }
      if (i % 2 == 1) {  // leave the map as it was
        const sim::CellCoord p = s.cells[(i / 2) % s.cells.size()];
        s.map.set_cost(p.x, p.y, sim::kDefaultCost);
        s.fields.prepare(s.map);
      }
      if (s.fields.graph_builds() != builds_before || s.fields.graph_updates() == updates_before) {
        st.SkipWithError("a map change rebuilt the whole graph");
        return;
      }
      st.counters["sectors_recomputed"] = changes == 0 ? 0.0 : static_cast<double>(recomputed) / static_cast<double>(changes);
      st.counters["graph_build_ms"] = s.graph_build_ms;
    });
  });
  change->Unit(benchmark::kMillisecond);
  auto* renumber = benchmark::RegisterBenchmark(("hier/map_change_renumber/" + c.label).c_str(), [c](benchmark::State& state) {
    run_change(state, c, [](benchmark::State& st, ChangeSetup& s) {
      sim::SectorGraph graph = s.fields.graph();  // a copy: the fields' routes stay as they are
      for (auto _ : st) {
        graph.update(s.map, {});
        benchmark::DoNotOptimize(graph.node_remap().data());
      }
    });
  });
  renumber->Unit(benchmark::kMillisecond);
  auto* bulk = benchmark::RegisterBenchmark(("hier/bulk_change/" + c.label).c_str(), [c](benchmark::State& state) {
    run_change(state, c, [](benchmark::State& st, ChangeSetup& s) {
      // A 256 x 256-cell district rebuilt: walls on every third street cell, then the streets
      // back, 2 x 65,536 cell changes between two reads: past the change log, followed by the
      // map's changed blocks (GridMap::changed_blocks_since()).
      const std::int32_t x0 = s.map.width() / 3, y0 = s.map.height() / 3;
      std::vector<std::pair<sim::CellCoord, std::uint8_t>> before;
      for (std::int32_t y = y0; y < y0 + 256; ++y)
        for (std::int32_t x = x0; x < x0 + 256; ++x) before.push_back({{x, y}, s.map.cost(x, y)});
      int round = 0;
      const std::uint64_t builds_before = s.fields.graph_builds();
      for (auto _ : st) {
        st.PauseTiming();
        for (const auto& [p, cost] : before) s.map.set_cost(p.x, p.y, (p.x + p.y + round) % 3 == 0 ? sim::kBlockedCost : sim::kDefaultCost);
        for (const auto& [p, cost] : before) s.map.set_cost(p.x, p.y, (p.x + p.y + round) % 3 == 1 ? sim::kBlockedCost : cost);
        ++round;
        st.ResumeTiming();
        s.fields.prepare(s.map);
      }
      for (const auto& [p, cost] : before) s.map.set_cost(p.x, p.y, cost);
      s.fields.prepare(s.map);
      if (s.fields.graph_builds() != builds_before) st.SkipWithError("a bulk change rebuilt the whole graph");
    });
  });
  bulk->Unit(benchmark::kMillisecond);
  auto* pack = benchmark::RegisterBenchmark(("hier/graph_pack/" + c.label).c_str(), [c](benchmark::State& state) {
    run_change(state, c, [](benchmark::State& st, ChangeSetup& s) {
      sim::SectorGraph graph = s.fields.graph();  // a copy: the fields' routes stay as they are
      for (auto _ : st) {
        graph.pack();
        benchmark::DoNotOptimize(graph.node_remap().data());
      }
    });
  });
  pack->Unit(benchmark::kMillisecond);
  auto* build = benchmark::RegisterBenchmark(("hier/graph_build/" + c.label).c_str(), [c](benchmark::State& state) {
    run_change(state, c, [](benchmark::State& st, ChangeSetup& s) {
      sim::SectorGraph graph;
      for (auto _ : st) {
        graph.build(s.map);
        benchmark::DoNotOptimize(graph.edge_count());
      }
    });
  });
  build->Unit(benchmark::kMillisecond);
  if (big > 0) {
    change->Iterations(big >= 8192 ? 16 : 32);
    renumber->Iterations(4);
    pack->Iterations(4);
    bulk->Iterations(4);
    build->Iterations(1);
  }
}

}  // namespace

void register_map_change_benchmarks(const BenchOptions& options) {
  if (options.quick) {
    register_change_case({"city:1024", 1024, "", 1}, 0);
    return;
  }
  for (const std::int32_t side : {1024, 4096, 8192}) register_change_case({"city:" + std::to_string(side), side, "", 1}, side >= 4096 ? side : 0);
  const std::string boston = "street/Boston_0_1024.map";
  register_change_case({"tiled:" + map_label(boston) + "x1", 0, boston, 1}, 0);
  register_change_case({"tiled:" + map_label(boston) + "x4", 0, boston, 4}, 4096);
  register_change_case({"tiled:" + map_label(boston) + "x8", 0, boston, 8}, 8192);
}

}  // namespace swarmfield::bench
