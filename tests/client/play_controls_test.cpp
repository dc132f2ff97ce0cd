// The viewer's --play controls: WASD to a unit move, the mouse to an aim from the own player, the
// left button to fire only when that aim has a direction.
#include "swarmfield/client/play_controls.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace swarmfield;

TEST_CASE("play controls: WASD moves (unit on diagonals), the mouse aims from the player, the button fires") {
  protocol::Input in;
  client::PlayControls c;
  c.up = true;
  c.right = true;
  client::apply_play_controls(c, sim::Vec2{10.0f, 10.0f}, in);
  CHECK(in.move_x == doctest::Approx(std::sqrt(0.5f)));
  CHECK(in.move_y == doctest::Approx(-std::sqrt(0.5f)));  // W is up the screen: -y
  CHECK_FALSE(in.fire);                                   // no button
  c = {};
  c.left = c.right = true;  // opposite keys cancel
  c.fire = true;
  c.mouse_world = sim::Vec2{13.0f, 6.0f};
  client::apply_play_controls(c, sim::Vec2{10.0f, 10.0f}, in);
  CHECK(in.move_x == 0.0f);
  CHECK(in.move_y == 0.0f);
  CHECK(in.fire);
  CHECK(in.aim_x == 3.0f);
  CHECK(in.aim_y == -4.0f);
  // No own position (not in a snapshot yet), no mouse, or the mouse on the player: no shot.
  client::apply_play_controls(c, std::nullopt, in);
  CHECK_FALSE(in.fire);
  CHECK(in.aim_x == 0.0f);
  c.mouse_world.reset();
  client::apply_play_controls(c, sim::Vec2{10.0f, 10.0f}, in);
  CHECK_FALSE(in.fire);
  c.mouse_world = sim::Vec2{10.0f, 10.0f};
  client::apply_play_controls(c, sim::Vec2{10.0f, 10.0f}, in);
  CHECK_FALSE(in.fire);
  // Released: the trigger goes.
  c.mouse_world = sim::Vec2{0.0f, 0.0f};
  client::apply_play_controls(c, sim::Vec2{10.0f, 10.0f}, in);
  CHECK(in.fire);
  c.fire = false;
  client::apply_play_controls(c, sim::Vec2{10.0f, 10.0f}, in);
  CHECK_FALSE(in.fire);
}
