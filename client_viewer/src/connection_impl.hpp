#pragma once
// Internal to swarmfield_client: Connection's sockets, timers, buffers and decoders (the pimpl),
// shared by connection.cpp (TCP session and handshake), connection_udp.cpp (UDP address and
// keep-alives), connection_snapshots.cpp (snapshots received) and connection_input.cpp.
#include <asio.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swarmfield/client/connection.hpp"
#include "swarmfield/protocol/transport/frame_seal.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/map_transfer.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"

namespace swarmfield::client {
namespace connection_detail {
using Clock = std::chrono::steady_clock;
}  // namespace connection_detail

struct Connection::Impl {
  Impl(asio::io_context& context, std::size_t baseline_agents)
      : io(context),
        resolver(context),
        tcp(context),
        udp(context),
        timer(context),
        data_timer(context),
        pacer(context),
        receiver(baseline_agents) {}
  asio::io_context& io;
  asio::ip::tcp::resolver resolver;
  asio::ip::tcp::socket tcp;
  asio::ip::udp::socket udp;
  asio::steady_timer timer;
  asio::steady_timer data_timer;  ///< no-data watchdog (options.data_timeout)
  asio::steady_timer pacer;       ///< connect requests and keep-alives
  std::optional<protocol::PacketChannel> channel;  ///< UDP packets, once Welcome gave the keys
  std::vector<std::uint8_t> body;                  ///< opened packet body (reused)
  connection_detail::Clock::time_point requesting_since;
  connection_detail::Clock::time_point last_request;
  connection_detail::Clock::time_point last_udp_send;
  connection_detail::Clock::time_point last_tcp_send;
  connection_detail::Clock::time_point last_udp_receive;  ///< last authenticated UDP packet from the server
  std::array<std::uint8_t, 64 * 1024> tcp_buffer{};
  std::array<std::uint8_t, 2048> udp_buffer{};
  std::deque<std::vector<std::uint8_t>> write_queue;
  bool writing = false;
  protocol::FrameDecoder decoder;
  /// A token session's sealed TCP stream (frame_seal.hpp): set once the Hello is on its way.
  std::optional<protocol::FrameSeal> send_seal;
  std::optional<protocol::FrameSeal> receive_seal;
  /// A token session waits for the server's clear SessionSalt before it seals anything; the
  /// keys the Welcome must then carry (derived from the token's and the salt, or from a resume).
  bool awaiting_salt = false;
  std::optional<std::pair<protocol::SessionKey, protocol::SessionKey>> expected_keys;
  protocol::FragmentAssembler assembler;  ///< UDP fragments -> snapshot payloads
  protocol::SnapshotReceiver receiver;    ///< payloads -> frames, against acknowledged baselines
  SnapshotState decoded;                  ///< the last decoded snapshot (reused)
  std::optional<protocol::MapAssembler> map_assembler;  ///< created by Welcome
  // Handlers can run after the Connection is gone (cancelled operations still complete);
  // they check this first.
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  connection_detail::Clock::time_point started_at;
  connection_detail::Clock::time_point connected_at;
  connection_detail::Clock::time_point last_data_at;  ///< last TCP read / UDP datagram from the server
  bool answered = false;           ///< the server sent at least one byte
  connection_detail::Clock::time_point window_start;
  std::uint64_t window_bytes = 0;
  std::uint64_t last_echo_us = 0;
  std::string endpoint_label;
};

}  // namespace swarmfield::client
