// Connection (connection.hpp): inputs, cleaned (finite, |move| <= 1, clamped view and aim, no
// fire without an aim), carrying the current build request, sent sealed over UDP once the
// address is confirmed, else over TCP; build requests numbered and queued.
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
  // The decoder refuses the whole Input for a cell no map has, request or not.
  const auto on_wire = [](std::int32_t v) { return v >= 0 && v < protocol::kMaxMapSide; };
  if (!on_wire(in.build_x) || !on_wire(in.build_y)) {
    in.build_id = 0;
    in.build_x = 0;
    in.build_y = 0;
  }
  return in;
}

std::uint32_t Connection::request_build(std::int32_t x, std::int32_t y) {
  if (state_ != ConnectionState::kConnected || !map_.in_bounds(x, y) || pending_builds_.size() >= kMaxPendingBuilds) {
    return 0;
  }
  ++last_build_id_;
  if (last_build_id_ == 0) ++last_build_id_;  // 0 means "none" on the wire (after 2^32 requests)
  pending_builds_.push_back(BuildRequest{last_build_id_, x, y});
  ++stats_.build_requests;
  return last_build_id_;
}

void Connection::attach_build(protocol::Input& input) {
  if (!pending_builds_.empty() && (current_build_.id == 0 || current_build_sends_ >= kBuildRepeats)) {
    current_build_ = pending_builds_.front();
    pending_builds_.pop_front();
    current_build_sends_ = 0;
  }
  input.build_id = current_build_.id;
  input.build_x = current_build_.x;
  input.build_y = current_build_.y;
  if (current_build_.id != 0 && current_build_sends_ < kBuildRepeats) ++current_build_sends_;
}

void Connection::send_input(const protocol::Input& input) {
  if (state_ != ConnectionState::kConnected) return;
  protocol::Input in = input;
  attach_build(in);
  in = clean_input(in);
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
