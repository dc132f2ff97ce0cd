#pragma once
// The viewer's --play controls turned into an Input: WASD moves, the mouse aims, the left button
// fires. Pure (no SDL), so the mapping is tested without a window.
#include <optional>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::client {

/// The keys and buttons held this frame, and where the mouse points (world units; none when the
/// pointer is outside the window).
struct PlayControls {
  bool up = false, down = false, left = false, right = false;  ///< W, S, A, D
  bool fire = false;                                           ///< left mouse button held
  std::optional<sim::Vec2> mouse_world;
};

/// Sets `input`'s move (unit length on a diagonal, y grows downward: W is -y), and its fire and
/// aim: aim = mouse - own position (world units; the server takes any length), fire only while
/// the button is held and the player's own position is known and the mouse is off its centre
/// (an aim of no direction would be refused). Leaves the other fields alone.
void apply_play_controls(const PlayControls& controls, std::optional<sim::Vec2> own_position, protocol::Input& input);

}  // namespace swarmfield::client
