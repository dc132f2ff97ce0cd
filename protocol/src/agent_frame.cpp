// Agent frames and views of them (see agent_frame.hpp).
#include "swarmfield/protocol/agent_frame.hpp"

namespace swarmfield::protocol {
namespace {

const DensityGrid kEmptyGrid{};

template <typename T>
void copy_out(const T* src, std::size_t n, std::vector<T>& dst) {
  dst.assign(src, src + n);
}

}  // namespace

void AgentFrame::clear() noexcept {
  ids.clear();
  xs.clear();
  ys.clear();
  headings.clear();
  kinds.clear();
  vxs.clear();
  vys.clear();
  ticks.clear();
  grid.clear();
}

void AgentFrame::resize(std::size_t n) {
  ids.resize(n);
  xs.resize(n);
  ys.resize(n);
  headings.resize(n);
  kinds.resize(n);
  vxs.resize(n);
  vys.resize(n);
  ticks.resize(n);
}

void AgentFrame::reserve(std::size_t n) {
  ids.reserve(n);
  xs.reserve(n);
  ys.reserve(n);
  headings.reserve(n);
  kinds.reserve(n);
  vxs.reserve(n);
  vys.reserve(n);
  ticks.reserve(n);
}

void AgentFrame::push_from(const AgentFrame& o, std::size_t i) {
  ids.push_back(o.ids[i]);
  xs.push_back(o.xs[i]);
  ys.push_back(o.ys[i]);
  headings.push_back(o.headings[i]);
  kinds.push_back(o.kinds[i]);
  vxs.push_back(o.vxs[i]);
  vys.push_back(o.vys[i]);
  ticks.push_back(o.ticks[i]);
}

AgentFrameView AgentFrameView::empty() noexcept {
  AgentFrameView v;
  v.grid = &kEmptyGrid;
  return v;
}

AgentFrameView AgentFrameView::of(const AgentFrame& f) noexcept {
  AgentFrameView v;
  v.sequence = f.sequence;
  v.tick = f.tick;
  v.size = f.ids.size();
  v.ids = f.ids.data();
  v.xs = f.xs.data();
  v.ys = f.ys.data();
  v.headings = f.headings.data();
  v.kinds = f.kinds.data();
  v.vxs = f.vxs.data();
  v.vys = f.vys.data();
  v.ticks = f.ticks.data();
  v.grid = &f.grid;
  return v;
}

void AgentFrameView::copy_to(AgentFrame& out) const {
  out.sequence = sequence;
  out.tick = tick;
  copy_out(ids, size, out.ids);
  copy_out(xs, size, out.xs);
  copy_out(ys, size, out.ys);
  copy_out(headings, size, out.headings);
  copy_out(kinds, size, out.kinds);
  copy_out(vxs, size, out.vxs);
  copy_out(vys, size, out.vys);
  copy_out(ticks, size, out.ticks);
  out.grid = grid ? *grid : DensityGrid{};
}

}  // namespace swarmfield::protocol
