// Brute-force O(N^2) separation gather (baseline; see the header).
#include "baselines/brute_separation.hpp"

namespace swarmfield::bench {

void brute_force_separation(const SeparationKernel& kernel, std::span<const float> xs, std::span<const float> ys,
                            std::vector<float>& out_x, std::vector<float>& out_y) {
  const std::size_t n = xs.size();
  out_x.resize(n);
  out_y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float px = xs[i], py = ys[i];
    SeparationKernel::Sum sum;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      kernel.add(sum, px - xs[j], py - ys[j]);
    }
    kernel.finish(sum, out_x[i], out_y[i]);
  }
}

}  // namespace swarmfield::bench
