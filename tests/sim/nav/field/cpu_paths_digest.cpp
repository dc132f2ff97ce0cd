// Digest of integration and flow fields built by every search method on real street maps and a
// generated city, for cpu_paths_test.sh: run natively (AVX-512 sweep rows and the x86-64-v4
// clones where the CPU has them) and under an emulated CPU without AVX-512 (qemu-x86_64 -cpu
// Haswell: the AVX2 clones, the scalar sweeps; -cpu qemu64: the baseline clones), every run must
// print the same digest. Also checks, in each run, that every method gives the wavefront's values.
// Prints "sweep_vector=<0|1>" (the AVX-512 sweep rows are in use) and "digest=<hex>".
// Exit 0 on success, 1 when methods disagree, 2 when a map cannot be read.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "../../../../server/sim/src/nav/field/integration_sweep.hpp"

using namespace swarmfield::sim;

namespace {

/// FNV-1a over bytes (Fowler, Noll, Vo).
struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
};

bool digest_map(const GridMap& map, const char* name, Fnv& fnv) {
  const std::vector<std::vector<CellCoord>> goal_sets = {
      {{map.width() / 2, map.height() / 2}},
      {{1, 1}, {map.width() - 2, map.height() - 2}, {map.width() / 3, 2 * map.height() / 3}}};
  bool ok = true;
  for (const auto& goals : goal_sets) {
    IntegrationField reference;
    reference.set_method(IntegrationField::Method::kWavefront);
    reference.build(map, goals);
    const std::vector<std::uint32_t> ref = reference.values();
    FlowField ref_flow;
    ref_flow.build(map, reference);
    for (const auto method : {IntegrationField::Method::kAuto, IntegrationField::Method::kSweeps,
                              IntegrationField::Method::kSweepsScalar}) {
      for (const std::uint32_t pairs : {IntegrationField::kDefaultSweepPairLimit, 1u}) {
        IntegrationField f;
        f.set_method(method);
        f.set_sweep_pair_limit(pairs);
        f.build(map, goals);
        FlowField flow;
        flow.build(map, f);
        if (f.values() != ref || flow.directions() != ref_flow.directions()) {
          std::printf("MISMATCH %s method %d pairs %u\n", name, static_cast<int>(method), pairs);
          ok = false;
        }
      }
    }
    fnv.bytes(ref.data(), ref.size() * sizeof(ref[0]));
    fnv.bytes(ref_flow.directions().data(), ref_flow.directions().size());
  }
  return ok;
}

}  // namespace

int main() {
  Fnv fnv;
  bool ok = true;
  for (const char* file : {"street/Boston_0_512.map", "street/Paris_1_1024.map"}) {
    GridMap map;
    MapError error;
    const std::string path = std::string(SWARMFIELD_MAPS_DIR) + "/" + file;
    if (!swarmfield::io::read_map_file(path, map, error)) {
      std::printf("cannot read %s\n", path.c_str());
      return 2;
    }
    ok = digest_map(map, file, fnv) && ok;
  }
  CityParams city;
  city.width = 384;
  city.height = 256;
  city.seed = 11;
  ok = digest_map(generate_city(city), "city 384x256", fnv) && ok;
  std::printf("sweep_vector=%d\ndigest=%016llx\n", detail::sweep_vector_supported() ? 1 : 0,
              static_cast<unsigned long long>(fnv.h));
  return ok ? 0 : 1;
}
