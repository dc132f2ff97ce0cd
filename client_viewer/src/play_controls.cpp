// The --play controls as an Input (play_controls.hpp).
#include "swarmfield/client/play_controls.hpp"

namespace swarmfield::client {

void apply_play_controls(const PlayControls& c, std::optional<sim::Vec2> own_position, protocol::Input& input) {
  const sim::Vec2 move{static_cast<float>((c.right ? 1 : 0) - (c.left ? 1 : 0)),
                       static_cast<float>((c.down ? 1 : 0) - (c.up ? 1 : 0))};
  const sim::Vec2 unit = sim::normalized_or_zero(move);
  input.move_x = unit.x;
  input.move_y = unit.y;
  input.fire = false;
  input.aim_x = input.aim_y = 0.0f;
  if (!c.fire || !own_position || !c.mouse_world) return;
  const sim::Vec2 aim = *c.mouse_world - *own_position;
  if (!sim::finite(aim) || sim::length(aim) < 1e-3f) return;
  input.fire = true;
  input.aim_x = aim.x;
  input.aim_y = aim.y;
}

}  // namespace swarmfield::client
