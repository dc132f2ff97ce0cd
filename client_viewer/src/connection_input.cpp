// Connection (connection.hpp): inputs, cleaned (finite, |move| <= 1, clamped view and aim, no
// fire without an aim), sent sealed over UDP once the address is confirmed, else over TCP.
#include <algorithm>
#include <cmath>

#include "connection_impl.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"

namespace swarmfield::client {

protocol::Input clean_input(protocol::Input in) noexcept {
  constexpr float kLimit = protocol::kMaxWireCoordinate;
  // The server rejects non-finite or out-of-range values; keep a caller's bad frame from
  // turning into a dropped input.
  auto clean = [](float v, float limit) {
    if (!std::isfinite(v)) return 0.0f;
    return std::clamp(v, -limit, limit);
  };
  // Scale (not clamp per axis) so the direction survives.
  in.move_x = clean(in.move_x, kLimit);
  in.move_y = clean(in.move_y, kLimit);
  const float len = std::sqrt(in.move_x * in.move_x + in.move_y * in.move_y);
  if (len > 1.0f) {
    in.move_x /= len;
    in.move_y /= len;
  }
  for (float* v : {&in.view_x0, &in.view_y0, &in.view_x1, &in.view_y1}) *v = clean(*v, kLimit);
  // Aim: a direction of any length, so scaled by its larger component (the clamp after it
  // catches the division's rounding); a trigger held with no direction is no shot.
  const bool aim_finite = std::isfinite(in.aim_x) && std::isfinite(in.aim_y);
  in.aim_x = aim_finite ? in.aim_x : 0.0f;
  in.aim_y = aim_finite ? in.aim_y : 0.0f;
  if (const float larger = std::max(std::fabs(in.aim_x), std::fabs(in.aim_y)); larger > kLimit) {
    in.aim_x = clean(in.aim_x / larger * kLimit, kLimit);
    in.aim_y = clean(in.aim_y / larger * kLimit, kLimit);
  }
  // The server refuses an aim shorter than 1e-6 (World::set_player_fire): not sent as fire.
  if (!(std::sqrt(in.aim_x * in.aim_x + in.aim_y * in.aim_y) >= 1e-6f)) in.fire = false;
  return in;
}

void Connection::send_input(const protocol::Input& input) {
  if (state_ != ConnectionState::kConnected) return;
  protocol::Input in = clean_input(input);
  last_input_ = in;
  ++stats_.inputs_sent;
  if (in.fire) ++stats_.inputs_firing;
  if (udp_state_ != UdpState::kConfirmed) {
    // The server sends nothing to an unconfirmed address and drops data from it: TCP meanwhile.
    send_tcp_input(in);
    return;
  }
  in.sequence = ++input_sequence_;
  in.snapshot_ack = impl_->receiver.ack();
  in.client_time_us = now_us();
  send_udp(impl_->channel->seal(protocol::PacketType::kData, protocol::encode_input_datagram(in)));
}

void Connection::send_tcp_input(protocol::Input input) {
  input.sequence = ++input_sequence_;
  input.snapshot_ack = impl_->receiver.ack();
  input.client_time_us = now_us();
  send_tcp(input);
}

}  // namespace swarmfield::client
