#include "swarmfield/client/connection.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <asio.hpp>
#include <utility>

#include "swarmfield/client/grid_map_from_costs.hpp"
#include "swarmfield/protocol/datagram.hpp"
#include "swarmfield/protocol/framing.hpp"
#include "swarmfield/protocol/map_transfer.hpp"
#include "swarmfield/protocol/packet.hpp"
#include "swarmfield/protocol/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot_receiver.hpp"

namespace swarmfield::client {

namespace {
using Clock = std::chrono::steady_clock;
constexpr double kRttSmoothing = 0.1;
// The pacer: connect requests 10 times a second (netcode.io's rate) for the first seconds, then
// once a second (a server that never answers must not cost 12 KB/s forever); a keep-alive when
// no UDP packet left for kUdpKeepAlive (it carries our ack: the server stops streaming to a
// client whose acks stop), or no TCP frame for kTcpKeepAlive while UDP is not in use (the
// server closes clients idle for --idle-timeout, 15 s by default).
constexpr auto kPacerInterval = std::chrono::milliseconds(100);
constexpr auto kRequestInterval = std::chrono::milliseconds(100);
constexpr auto kSlowRequestInterval = std::chrono::seconds(1);
constexpr auto kFastRequestPeriod = std::chrono::seconds(5);
constexpr auto kUdpKeepAlive = std::chrono::milliseconds(100);
constexpr auto kTcpKeepAlive = std::chrono::seconds(1);
// Confirmed, but no UDP packet from the server for this long (it sends snapshots at least once a
// second): the server may have dropped our address; confirm one again (TCP carries meanwhile).
constexpr auto kUdpSilence = std::chrono::seconds(3);

// "5 s", "0.3 s": durations in user-facing messages.
std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}
}  // namespace

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
  Clock::time_point requesting_since;
  Clock::time_point last_request;
  Clock::time_point last_udp_send;
  Clock::time_point last_tcp_send;
  Clock::time_point last_udp_receive;  ///< last authenticated UDP packet from the server
  std::array<std::uint8_t, 64 * 1024> tcp_buffer{};
  std::array<std::uint8_t, 2048> udp_buffer{};
  std::deque<std::vector<std::uint8_t>> write_queue;
  bool writing = false;
  protocol::FrameDecoder decoder;
  protocol::FragmentAssembler assembler;  ///< UDP fragments -> snapshot payloads
  protocol::SnapshotReceiver receiver;    ///< payloads -> frames, against acknowledged baselines
  SnapshotState decoded;                  ///< the last decoded snapshot (reused)
  std::optional<protocol::MapAssembler> map_assembler;  ///< created by Welcome
  // Handlers can run after the Connection is gone (cancelled operations still complete);
  // they check this first.
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  Clock::time_point started_at;
  Clock::time_point connected_at;
  Clock::time_point last_data_at;  ///< last TCP read / UDP datagram from the server
  bool answered = false;           ///< the server sent at least one byte
  Clock::time_point window_start;
  std::uint64_t window_bytes = 0;
  std::uint64_t last_echo_us = 0;
  std::string endpoint_label;
};

const char* to_string(ConnectionState state) noexcept {
  switch (state) {
    case ConnectionState::kIdle: return "idle";
    case ConnectionState::kConnecting: return "connecting";
    case ConnectionState::kHandshake: return "handshake";
    case ConnectionState::kConnected: return "connected";
    case ConnectionState::kClosed: return "closed";
    case ConnectionState::kFailed: return "failed";
  }
  return "unknown";
}

std::uint64_t Connection::now_us() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count());
}

Connection::Connection(asio::io_context& io, ConnectionOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(io, options_.baseline_agents)) {
  if (options_.name.size() > protocol::kMaxNameBytes) options_.name.resize(protocol::kMaxNameBytes);
  if (options_.snapshot_history < 2) options_.snapshot_history = 2;
  impl_->endpoint_label = options_.host + ":" + std::to_string(options_.port);
}

Connection::~Connection() {
  *impl_->alive = false;
  asio::error_code ignored;
  impl_->resolver.cancel();
  impl_->timer.cancel();
  impl_->data_timer.cancel();
  impl_->pacer.cancel();
  impl_->tcp.close(ignored);
  impl_->udp.close(ignored);
}

void Connection::start() {
  if (state_ != ConnectionState::kIdle) return;
  state_ = ConnectionState::kConnecting;
  impl_->started_at = Clock::now();
  impl_->window_start = impl_->started_at;
  auto alive = impl_->alive;

  impl_->timer.expires_after(options_.connect_timeout);
  impl_->timer.async_wait([this, alive](const asio::error_code& ec) {
    if (!*alive || ec) return;
    if (state_ == ConnectionState::kConnecting) {
      fail("could not connect to " + impl_->endpoint_label + ": timed out after " +
           std::to_string(options_.connect_timeout.count()) + " ms");
    }
  });

  impl_->resolver.async_resolve(
      options_.host, std::to_string(options_.port),
      [this, alive](const asio::error_code& ec, const asio::ip::tcp::resolver::results_type& results) {
        if (!*alive || state_ != ConnectionState::kConnecting) return;
        if (ec) {
          fail("could not connect to " + impl_->endpoint_label + ": could not resolve host: " + ec.message());
          return;
        }
        asio::async_connect(impl_->tcp, results,
                            [this, alive](const asio::error_code& cec, const asio::ip::tcp::endpoint&) {
                              if (!*alive || state_ != ConnectionState::kConnecting) return;
                              if (cec) {
                                fail("could not connect to " + impl_->endpoint_label + ": " + cec.message());
                                return;
                              }
                              asio::error_code ignored;
                              impl_->tcp.set_option(asio::ip::tcp::no_delay(true), ignored);
                              state_ = ConnectionState::kHandshake;
                              // Re-arm the timer: the server must answer the Hello within the
                              // connect budget (a server that accepts but never answers must not
                              // hold us for the whole handshake budget), then the map must be
                              // complete within the handshake budget.
                              arm_data_timer();
                              impl_->timer.expires_at(impl_->started_at + options_.handshake_timeout);
                              impl_->timer.async_wait([this, alive](const asio::error_code& tec) {
                                if (!*alive || tec) return;
                                if (state_ == ConnectionState::kHandshake) {
                                  fail("handshake with " + impl_->endpoint_label + " timed out after " +
                                       std::to_string(options_.handshake_timeout.count()) +
                                       " ms (no Welcome/map from the server)");
                                }
                              });
                              protocol::Hello hello;
                              hello.protocol_version = protocol::kProtocolVersion;
                              hello.role = options_.role;
                              hello.name = options_.name;
                              send_tcp(hello);
                              start_tcp_read();
                            });
      });
}

bool Connection::connect_blocking() {
  start();
  // The timers inside bound this loop; the extra deadline guards against a stuck context.
  const auto deadline = Clock::now() + options_.handshake_timeout + std::chrono::seconds(1);
  while (!connected() && !finished() && Clock::now() < deadline) {
    if (impl_->io.stopped()) impl_->io.restart();
    impl_->io.run_one_for(std::chrono::milliseconds(50));
  }
  if (!connected() && !finished()) fail("handshake with " + impl_->endpoint_label + " timed out");
  return connected();
}

void Connection::fail(const std::string& message) {
  if (finished()) return;
  const bool was_connected = state_ == ConnectionState::kConnected;
  error_ = message;
  state_ = was_connected ? ConnectionState::kClosed : ConnectionState::kFailed;
  asio::error_code ignored;
  impl_->resolver.cancel();
  impl_->timer.cancel();
  impl_->data_timer.cancel();
  impl_->pacer.cancel();
  impl_->tcp.close(ignored);
  impl_->udp.close(ignored);
}

void Connection::close(const std::string& reason) {
  if (finished()) return;
  if (state_ == ConnectionState::kConnected || state_ == ConnectionState::kHandshake) {
    // Best effort goodbye, written synchronously so it leaves before the socket closes. Skipped
    // while an async write is in flight (two writers would interleave frames).
    if (!impl_->writing && impl_->tcp.is_open()) {
      protocol::Bye bye;
      bye.reason = reason.substr(0, protocol::kMaxReasonBytes);
      std::vector<std::uint8_t> frame;
      if (protocol::append_frame(protocol::encode_tcp_message(bye), frame)) {
        asio::error_code ignored;
        impl_->tcp.non_blocking(false, ignored);
        asio::write(impl_->tcp, asio::buffer(frame), ignored);
      }
    }
  }
  fail("");
  state_ = ConnectionState::kClosed;
}

const ConnectionStats& Connection::stats() {
  const auto now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - impl_->window_start).count();
  if (seconds >= 1.0) {
    stats_.kbit_per_s = static_cast<double>(impl_->window_bytes) * 8.0 / 1000.0 / seconds;
    impl_->window_bytes = 0;
    impl_->window_start = now;
  }
  stats_.fragments_lost = impl_->assembler.abandoned();
  return stats_;
}

void Connection::send_tcp(const protocol::TcpMessage& message) {
  std::vector<std::uint8_t> frame;
  if (!protocol::append_frame(protocol::encode_tcp_message(message), frame)) return;
  stats_.bytes_sent += frame.size();
  impl_->last_tcp_send = Clock::now();
  impl_->write_queue.push_back(std::move(frame));
  if (!impl_->writing) start_write();
}

void Connection::start_write() {
  if (impl_->write_queue.empty() || finished()) {
    impl_->writing = false;
    return;
  }
  impl_->writing = true;
  auto alive = impl_->alive;
  asio::async_write(impl_->tcp, asio::buffer(impl_->write_queue.front()),
                    [this, alive](const asio::error_code& ec, std::size_t) {
                      if (!*alive) return;
                      impl_->writing = false;
                      if (finished()) return;
                      if (ec) {
                        fail(state_ == ConnectionState::kConnected
                                 ? "connection to " + impl_->endpoint_label + " lost: " + ec.message()
                                 : "server closed the connection during handshake (" + ec.message() + ")");
                        return;
                      }
                      impl_->write_queue.pop_front();
                      start_write();
                    });
}

void Connection::start_tcp_read() {
  auto alive = impl_->alive;
  impl_->tcp.async_read_some(
      asio::buffer(impl_->tcp_buffer), [this, alive](const asio::error_code& ec, std::size_t n) {
        if (!*alive || finished()) return;
        if (ec) {
          if (state_ == ConnectionState::kConnected) {
            fail(ec == asio::error::eof ? "server closed the connection"
                                        : "connection to " + impl_->endpoint_label + " lost: " + ec.message());
          } else {
            fail("server closed the connection during handshake" +
                 (ec == asio::error::eof ? std::string() : " (" + ec.message() + ")"));
          }
          return;
        }
        note_data();
        stats_.bytes_received += n;
        impl_->window_bytes += n;
        impl_->decoder.feed(std::span<const std::uint8_t>(impl_->tcp_buffer.data(), n));
        std::vector<std::uint8_t> frame;
        while (!finished()) {
          const auto status = impl_->decoder.next(frame);
          if (status == protocol::FrameDecoder::Status::kNeedMore) break;
          if (status == protocol::FrameDecoder::Status::kTooLarge) {
            fail("server sent a frame larger than " + std::to_string(protocol::kMaxFrameBytes) + " bytes");
            return;
          }
          std::string error;
          auto message = protocol::decode_tcp_message(frame, &error, protocol::MessageSet::kFromServer);
          if (!message) {
            fail("server sent a bad message: " + error);
            return;
          }
          on_tcp_message(std::move(*message));
        }
        if (!finished()) start_tcp_read();
      });
}

void Connection::on_tcp_message(protocol::TcpMessage&& message) {
  if (auto* error = std::get_if<protocol::Error>(&message)) {
    fail("server error: " + error->reason);
    return;
  }
  if (auto* bye = std::get_if<protocol::Bye>(&message)) {
    ended_by_bye_ = state_ == ConnectionState::kConnected;
    fail(state_ == ConnectionState::kConnected ? "server closed the session: " + bye->reason
                                               : "server closed the connection during handshake: " + bye->reason);
    return;
  }
  if (auto* welcome = std::get_if<protocol::Welcome>(&message)) {
    if (state_ != ConnectionState::kHandshake || welcome_.map.chunk_count != 0) {
      fail("server sent a second Welcome");
      return;
    }
    // decode_tcp_message already range-checked MapInfo (sizes, chunk_count, cell_size).
    welcome_ = std::move(*welcome);
    impl_->map_assembler.emplace(welcome_.map);
    if (options_.use_udp && welcome_.udp_port != 0) open_udp();
    impl_->last_tcp_send = Clock::now();
    arm_pacer();
    return;
  }
  if (auto* chunk = std::get_if<protocol::MapChunk>(&message)) {
    if (state_ != ConnectionState::kHandshake || !impl_->map_assembler) {
      fail("server sent a MapChunk outside the handshake");
      return;
    }
    on_map_chunk(std::move(*chunk));
    return;
  }
  if (auto* snapshot = std::get_if<protocol::SnapshotData>(&message)) {
    // A snapshot may overtake the end of the map transfer; keep it either way.
    on_snapshot_payload(snapshot->payload, true);
    return;
  }
  // Hello / Input are client -> server only.
  fail("server sent an unexpected message");
}

void Connection::on_map_chunk(protocol::MapChunk&& chunk) {
  std::string error;
  if (!impl_->map_assembler->add(chunk, &error)) {
    fail("server sent a bad map: " + error);
    return;
  }
  if (impl_->map_assembler->complete()) finish_map();
}

void Connection::finish_map() {
  std::string error;
  const auto costs = impl_->map_assembler->finish(&error);
  if (!costs) {
    fail("server sent a bad map: " + error);
    return;
  }
  if (!grid_map_from_costs(welcome_.map.width, welcome_.map.height, welcome_.map.cell_size, *costs, map_)) {
    fail("server sent a bad map: " + std::to_string(costs->size()) + " cost bytes for a " +
         std::to_string(welcome_.map.width) + "x" + std::to_string(welcome_.map.height) + " map");
    return;
  }
  impl_->map_assembler.reset();
  state_ = ConnectionState::kConnected;
  impl_->connected_at = Clock::now();
  impl_->timer.cancel();
}

void Connection::note_data() {
  impl_->last_data_at = Clock::now();
  if (!impl_->answered) {
    impl_->answered = true;
    // The watchdog still waits for the connect deadline: switch it to the data timeout now.
    arm_data_timer();
  }
}

void Connection::arm_data_timer() {
  if (finished()) return;
  // Before the server's first byte the connect budget applies; after it, the data timeout.
  Clock::time_point deadline;
  if (!impl_->answered) {
    deadline = impl_->started_at + options_.connect_timeout;
  } else if (options_.data_timeout.count() > 0) {
    deadline = impl_->last_data_at + options_.data_timeout;
  } else {
    return;
  }
  if (Clock::now() >= deadline) {
    if (!impl_->answered) {
      fail("server at " + impl_->endpoint_label + " accepted the connection but did not answer within " +
           std::to_string(options_.connect_timeout.count()) + " ms (is it a swarmfield server? is it hung?)");
    } else {
      fail("no data from the server for " + seconds_text(options_.data_timeout) + " (server hung or network down)");
    }
    return;
  }
  impl_->data_timer.expires_at(deadline);
  auto alive = impl_->alive;
  impl_->data_timer.async_wait([this, alive](const asio::error_code& ec) {
    if (!*alive || ec) return;
    arm_data_timer();  // re-checks against the newest data time
  });
}

void Connection::open_udp() {
  asio::error_code ec;
  const auto remote = impl_->tcp.remote_endpoint(ec);
  if (ec) return;  // the TCP read will report the failure
  const asio::ip::udp::endpoint server(remote.address(), welcome_.udp_port);
  impl_->udp.open(server.protocol(), ec);
  if (!ec) impl_->udp.connect(server, ec);
  if (ec) {
    // Not fatal: snapshots keep coming over TCP and inputs go over TCP.
    asio::error_code ignored;
    impl_->udp.close(ignored);
    return;
  }
  impl_->channel.emplace(protocol::PacketChannel::Side::kClient, welcome_.udp);
  start_udp_read();
  request_udp_address();
  on_pacer();  // the first request now, not a pacer interval later
}

void Connection::request_udp_address() {
  udp_state_ = UdpState::kRequesting;
  newest_udp_tick_ = 0;
  impl_->requesting_since = Clock::now();
  impl_->last_request = {};
}

void Connection::send_udp(std::vector<std::uint8_t> packet) {
  if (packet.empty() || !impl_->udp.is_open()) return;
  auto datagram = std::make_shared<std::vector<std::uint8_t>>(std::move(packet));
  stats_.bytes_sent += datagram->size();
  impl_->last_udp_send = Clock::now();
  impl_->udp.async_send(asio::buffer(*datagram), [datagram](const asio::error_code&, std::size_t) {
    // Fire and forget: a lost packet is replaced by the next one.
  });
}

void Connection::arm_pacer() {
  if (finished()) return;
  impl_->pacer.expires_after(kPacerInterval);
  auto alive = impl_->alive;
  impl_->pacer.async_wait([this, alive](const asio::error_code& ec) {
    if (!*alive || ec || finished()) return;
    on_pacer();
    arm_pacer();
  });
}

void Connection::on_pacer() {
  const auto now = Clock::now();
  if (udp_state_ == UdpState::kConfirmed && now - impl_->last_udp_receive > kUdpSilence) request_udp_address();
  if (udp_state_ == UdpState::kRequesting && impl_->channel) {
    const auto interval = now - impl_->requesting_since < kFastRequestPeriod ? kRequestInterval : kSlowRequestInterval;
    if (now - impl_->last_request >= interval) {
      send_udp(impl_->channel->seal(protocol::PacketType::kConnectRequest, {}));
      impl_->last_request = now;
    }
  }
  if (udp_state_ == UdpState::kConfirmed && now - impl_->last_udp_send >= kUdpKeepAlive) {
    send_udp(impl_->channel->seal(protocol::PacketType::kData, {}));
    ++stats_.keepalives_sent;
  }
  if (udp_state_ != UdpState::kConfirmed && now - impl_->last_tcp_send >= kTcpKeepAlive) {
    send_tcp_input(last_input_);
    ++stats_.keepalives_sent;
  }
}

void Connection::on_udp_datagram(std::size_t n) {
  note_data();
  stats_.bytes_received += n;
  impl_->window_bytes += n;
  if (!impl_->channel) return;
  protocol::PacketHeader header;
  const auto datagram = std::span<const std::uint8_t>(impl_->udp_buffer.data(), std::min(n, impl_->udp_buffer.size()));
  if (impl_->channel->open(datagram, header, impl_->body) != protocol::PacketChannel::OpenResult::kOk) {
    ++stats_.bad_datagrams;  // forged, replayed, corrupted or not ours
    return;
  }
  impl_->last_udp_receive = Clock::now();
  if (header.type == protocol::PacketType::kChallenge) {
    // Proves we receive at this address: echo the challenge, sealed with our key.
    if (udp_state_ == UdpState::kRequesting) send_udp(impl_->channel->seal(protocol::PacketType::kChallengeResponse, impl_->body));
    return;
  }
  // Data is only ever sent to a confirmed address.
  if (udp_state_ != UdpState::kConfirmed) {
    udp_state_ = UdpState::kConfirmed;
    ++stats_.udp_confirmations;
  }
  if (impl_->body.empty()) return;  // keep-alive
  // Every other data packet from the server is one snapshot fragment.
  const std::uint64_t malformed_before = impl_->assembler.malformed();
  const auto whole = impl_->assembler.add(impl_->body);
  stats_.bad_datagrams += impl_->assembler.malformed() - malformed_before;
  if (whole) on_snapshot_payload(*whole, false);
}

void Connection::start_udp_read() {
  auto alive = impl_->alive;
  impl_->udp.async_receive(
      asio::buffer(impl_->udp_buffer), [this, alive](const asio::error_code& ec, std::size_t n) {
        if (!*alive || finished()) return;
        if (ec == asio::error::operation_aborted || !impl_->udp.is_open()) return;
        if (!ec) on_udp_datagram(n);
        // Other errors (e.g. ICMP port unreachable on a connected UDP socket) are transient.
        if (!finished()) start_udp_read();
      });
}

void Connection::on_snapshot_payload(std::span<const std::uint8_t> payload, bool via_tcp) {
  using Result = protocol::SnapshotReceiver::Result;
  const Result result = impl_->receiver.receive(payload);
  if (result == Result::kMalformed) {
    ++stats_.bad_datagrams;
    return;
  }
  if (result == Result::kNoBaseline) {
    // Encoded against a frame we never decoded (lost, or still in flight on the other
    // transport): not acknowledged, so the server falls back to one we did.
    ++stats_.snapshots_no_baseline;
    return;
  }
  if (result != Result::kDecoded) return;  // stale: reordered or duplicated on the way
  const protocol::SnapshotHeader& header = impl_->receiver.header();
  if (via_tcp) {
    // A snapshot over TCP newer than the UDP ones since confirmation: the server stopped
    // streaming to our address (its ack timeout); confirm an address again. (TCP snapshots
    // still in flight from before the confirmation are older than the first UDP one.)
    if (udp_state_ == UdpState::kConfirmed && newest_udp_tick_ != 0 && header.tick > newest_udp_tick_) {
      request_udp_address();
    }
  } else {
    newest_udp_tick_ = std::max(newest_udp_tick_, header.tick);
    // Acknowledge at once: the sooner the server knows, the newer the baseline of the next
    // snapshot (smaller deltas). Inputs carry the same ack; this covers clients that send few.
    if (udp_state_ == UdpState::kConfirmed && impl_->channel) {
      send_udp(impl_->channel->seal(protocol::PacketType::kData, protocol::encode_ack_datagram(impl_->receiver.ack())));
      ++stats_.acks_sent;
    }
  }
  unpack_frame(header, impl_->receiver.frame(), welcome_.map.cell_size, impl_->decoded);
  on_snapshot(via_tcp);
}

void Connection::on_snapshot(bool via_tcp) {
  ++stats_.snapshots_received;
  if (via_tcp) ++stats_.snapshots_tcp;
  const auto now_clock = Clock::now();
  const std::uint64_t now = now_us();
  const SnapshotState& snapshot = impl_->decoded;
  const std::uint64_t echo = snapshot.echo_client_time_us;
  // One RTT sample per distinct echoed input time (a snapshot can echo the same input twice).
  if (echo != 0 && echo > impl_->last_echo_us && echo <= now) {
    impl_->last_echo_us = echo;
    const double sample = static_cast<double>(now - echo) / 1000.0;
    stats_.rtt_ms = stats_.rtt_samples == 0 ? sample : stats_.rtt_ms + kRttSmoothing * (sample - stats_.rtt_ms);
    stats_.rtt_ms_last = sample;
    stats_.rtt_ms_sum += sample;
    ++stats_.rtt_samples;
  }
  if (!snapshots_.empty() && snapshot.tick <= snapshots_.back().snapshot.tick) return;  // not newer
  // Reuse the oldest entry's buffers once the history is full.
  if (snapshots_.size() >= options_.snapshot_history) {
    ReceivedSnapshot recycled = std::move(snapshots_.front());
    snapshots_.pop_front();
    recycled.snapshot = snapshot;
    recycled.received_at = now_clock;
    snapshots_.push_back(std::move(recycled));
  } else {
    snapshots_.push_back(ReceivedSnapshot{snapshot, now_clock});
  }
  ++new_snapshots_;
}

void Connection::send_input(const protocol::Input& input) {
  if (state_ != ConnectionState::kConnected) return;
  protocol::Input in = input;
  // The server rejects non-finite or out-of-range values; keep a caller's bad frame from
  // turning into a dropped input.
  auto clean = [](float v, float limit) {
    if (!std::isfinite(v)) return 0.0f;
    return std::clamp(v, -limit, limit);
  };
  // Scale (not clamp per axis) so the direction survives.
  in.move_x = clean(in.move_x, protocol::kMaxWireCoordinate);
  in.move_y = clean(in.move_y, protocol::kMaxWireCoordinate);
  const float len = std::sqrt(in.move_x * in.move_x + in.move_y * in.move_y);
  if (len > 1.0f) {
    in.move_x /= len;
    in.move_y /= len;
  }
  for (float* v : {&in.view_x0, &in.view_y0, &in.view_x1, &in.view_y1}) *v = clean(*v, protocol::kMaxWireCoordinate);
  last_input_ = in;
  ++stats_.inputs_sent;
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
