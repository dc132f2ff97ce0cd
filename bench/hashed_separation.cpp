// Separation gather through the spatial hash (see the header).
#include "hashed_separation.hpp"

namespace swarmfield::bench {

void hashed_separation(const SeparationKernel& kernel, sim::SpatialHash& hash, std::span<const float> xs,
                       std::span<const float> ys, std::vector<float>& out_x, std::vector<float>& out_y) {
  hash.rebuild(xs, ys);
  const std::size_t n = xs.size();
  out_x.resize(n);
  out_y.resize(n);
  const std::span<const std::uint32_t> items = hash.items();
  const std::span<const float> sxs = hash.sorted_xs(), sys = hash.sorted_ys();
  for (std::size_t k = 0; k < n; ++k) {  // slot order: neighbours are close in memory
    const float px = sxs[k], py = sys[k];
    SeparationKernel::Sum sum;
    hash.for_each_slot_near({px, py}, [&](std::uint32_t m) {
      if (m != k) kernel.add(sum, px - sxs[m], py - sys[m]);
    });
    kernel.finish(sum, out_x[items[k]], out_y[items[k]]);
  }
}

}  // namespace swarmfield::bench
