// Agent frames and views of them (see agent_frame.hpp).
#include "swarmfield/protocol/snapshot/agent_frame.hpp"

namespace swarmfield::protocol {
namespace {

const DensityGrid kEmptyGrid{};

}  // namespace

AgentFrameView AgentFrameView::empty() noexcept {
  AgentFrameView v;
  v.grid = &kEmptyGrid;
  return v;
}

AgentFrameView AgentFrameView::of(const AgentFrame& f) noexcept {
  AgentFrameView v;
  v.sequence = f.sequence;
  v.tick = f.tick;
  v.agents = f.agents;
  v.grid = &f.grid;
  return v;
}

void AgentFrameView::copy_to(AgentFrame& out) const {
  out.sequence = sequence;
  out.tick = tick;
  out.agents.assign(agents.begin(), agents.end());
  out.grid = grid ? *grid : DensityGrid{};
}

}  // namespace swarmfield::protocol
