// Connection (connection.hpp): connect, the TCP session (framed writes and reads), the
// handshake (Welcome and the map), the server's map changes (MapDelta), the no-data watchdog,
// close. UDP is in connection_udp.cpp,
// snapshots received in connection_snapshots.cpp, inputs sent in connection_input.cpp.
#include "swarmfield/client/connection.hpp"

#include <algorithm>

#include <cstdio>
#include <utility>

#include "connection_impl.hpp"
#include "swarmfield/client/grid_map_from_costs.hpp"
#include "swarmfield/cli/control_chars.hpp"

namespace swarmfield::client {

namespace {
using connection_detail::Clock;

// "5 s", "0.3 s": durations in user-facing messages.
std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}
}  // namespace

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
                              bool seal_now = false;
                              if (options_.resume) {
                                const protocol::ResumeProof proof = protocol::resume_proof(options_.resume->secret);
                                hello.resume.assign(proof.begin(), proof.end());
                                const auto keys = protocol::derive_resumed_keys(options_.resume->secret);
                                impl_->expected_keys.emplace(keys.client_to_server, keys.server_to_client);
                                seal_now = options_.resume->sealed;
                              } else if (options_.token) {
                                hello.connect_token = protocol::hello_token_bytes(*options_.token);
                                impl_->awaiting_salt = true;  // the keys come with the server's salt
                              }
                              send_tcp(hello);
                              if (seal_now) seal_stream(*impl_->expected_keys);
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

void Connection::seal_stream(const std::pair<protocol::SessionKey, protocol::SessionKey>& keys) {
  impl_->send_seal.emplace(keys.first, protocol::Direction::kTcpClientToServer);
  impl_->receive_seal.emplace(keys.second, protocol::Direction::kTcpServerToClient);
}

bool Connection::take_salt(std::span<const std::uint8_t> frame) {
  impl_->awaiting_salt = false;
  auto clear = protocol::decode_tcp_message(frame, nullptr, protocol::MessageSet::kFromServer);
  if (clear && std::holds_alternative<protocol::Error>(*clear)) {
    on_tcp_message(std::move(*clear));  // the token was refused
    return false;
  }
  const auto* salt = clear ? std::get_if<protocol::SessionSalt>(&*clear) : nullptr;
  if (salt == nullptr) {
    fail("server's answer to the connect token was neither its salt nor a refusal");
    return false;
  }
  const protocol::TokenSessionKeys keys = protocol::derive_token_session_keys(
      options_.token->client_to_server, options_.token->server_to_client, salt->salt);
  impl_->expected_keys.emplace(keys.client_to_server, keys.server_to_client);
  seal_stream(*impl_->expected_keys);
  return true;
}

std::optional<ResumeTicket> Connection::resume_ticket() const {
  if (welcome_.resume.size() != protocol::kResumeSecretBytes) return std::nullopt;
  ResumeTicket ticket;
  std::copy(welcome_.resume.begin(), welcome_.resume.end(), ticket.secret.begin());
  ticket.sealed = impl_->receive_seal.has_value();
  return ticket;
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
    if (!impl_->writing && impl_->tcp.is_open() && !impl_->awaiting_salt) {
      protocol::Bye bye;
      bye.reason = reason.substr(0, protocol::kMaxReasonBytes);
      std::vector<std::uint8_t> frame;
      if (frame_message(bye, frame)) {
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

bool Connection::frame_message(const protocol::TcpMessage& message, std::vector<std::uint8_t>& frame) {
  const std::vector<std::uint8_t> payload = protocol::encode_tcp_message(message);
  return impl_->send_seal ? impl_->send_seal->seal(payload, frame) : protocol::append_frame(payload, frame);
}

void Connection::send_tcp(const protocol::TcpMessage& message) {
  std::vector<std::uint8_t> frame;
  if (!frame_message(message, frame)) return;
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
        std::vector<std::uint8_t> opened;
        while (!finished()) {
          const auto status = impl_->decoder.next(frame);
          if (status == protocol::FrameDecoder::Status::kNeedMore) break;
          if (status == protocol::FrameDecoder::Status::kTooLarge) {
            fail("server sent a frame larger than " + std::to_string(protocol::kMaxFrameBytes) + " bytes");
            return;
          }
          if (impl_->awaiting_salt) {
            if (!take_salt(frame)) return;
            continue;
          }
          std::span<const std::uint8_t> bytes = frame;
          if (impl_->receive_seal) {
            if (impl_->receive_seal->open(frame, opened)) {
              bytes = opened;
            } else if (impl_->receive_seal->frames() == 0) {
              // The server refuses a token before it trusts its keys: that answer is clear, and
              // only a refusal (Error) may be.
              auto refusal = protocol::decode_tcp_message(frame, nullptr, protocol::MessageSet::kFromServer);
              if (refusal && std::holds_alternative<protocol::Error>(*refusal)) {
                on_tcp_message(std::move(*refusal));
              } else {
                fail("server's answer did not open with the connect token's key (not the server the token is for?)");
              }
              return;
            } else {
              fail("a frame from the server did not open with the session key (the stream was tampered with)");
              return;
            }
          }
          std::string error;
          auto message = protocol::decode_tcp_message(bytes, &error, protocol::MessageSet::kFromServer);
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
  // The server's words reach a terminal (error(), the programs' messages): never raw, or a
  // hostile server could write escape sequences to the user's terminal. (Names in Welcome are
  // refused by the decoder when they hold control characters; reasons are free text.)
  if (auto* error = std::get_if<protocol::Error>(&message)) {
    ended_by_server_ = true;
    fail("server error: " + cli::printable_ascii(error->reason));
    return;
  }
  if (auto* bye = std::get_if<protocol::Bye>(&message)) {
    ended_by_bye_ = state_ == ConnectionState::kConnected;
    ended_by_server_ = true;
    const std::string reason = cli::printable_ascii(bye->reason);
    fail(state_ == ConnectionState::kConnected ? "server closed the session: " + reason
                                               : "server closed the connection during handshake: " + reason);
    return;
  }
  if (auto* welcome = std::get_if<protocol::Welcome>(&message)) {
    if (state_ != ConnectionState::kHandshake || welcome_.map.chunk_count != 0) {
      fail("server sent a second Welcome");
      return;
    }
    // decode_tcp_message already range-checked MapInfo (sizes, chunk_count, cell_size).
    const std::uint64_t cells = std::uint64_t(welcome->map.width) * std::uint64_t(welcome->map.height);
    if (cells > options_.max_map_cells) {
      fail("the server's map is " + std::to_string(welcome->map.width) + "x" + std::to_string(welcome->map.height) +
           " = " + std::to_string(cells) + " cells, more than --max-map-cells " +
           std::to_string(options_.max_map_cells) + ": raise it to join this server");
      return;
    }
    if (impl_->expected_keys && (welcome->udp.client_to_server != impl_->expected_keys->first ||
                                 welcome->udp.server_to_client != impl_->expected_keys->second)) {
      fail("server's Welcome does not carry the session's keys (derived from the token or the resume secret)");
      return;
    }
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
  if (const auto* delta = std::get_if<protocol::MapDelta>(&message)) {
    on_map_delta(*delta);
    return;
  }
  // Hello / Input are client -> server only; a SessionSalt only answers a token's Hello.
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

// Deltas before the map is complete wait for it (a server sends them after the chunks, but a
// change may be under way while they go out); bounded, since each holds up to 4096 cells.
void Connection::on_map_delta(const protocol::MapDelta& delta) {
  constexpr std::size_t kMaxEarlyDeltas = 256;
  if (state_ != ConnectionState::kConnected) {
    if (state_ != ConnectionState::kHandshake || early_deltas_.size() >= kMaxEarlyDeltas) {
      fail("server sent too many MapDeltas before the map was complete");
      return;
    }
    early_deltas_.push_back(delta);
    return;
  }
  apply_map_delta(delta, map_, map_changes_);
  stats_.map_deltas = map_changes_.deltas_applied;
  stats_.map_deltas_ignored = map_changes_.deltas_ignored;
  stats_.map_cells_skipped = map_changes_.cells_skipped;
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
  for (const protocol::MapDelta& delta : early_deltas_) on_map_delta(delta);
  early_deltas_.clear();
  early_deltas_.shrink_to_fit();
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

}  // namespace swarmfield::client
