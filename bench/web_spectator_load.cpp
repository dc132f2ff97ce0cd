// Load generator for the browser spectator (issue 23, item 2): N WebSocket spectators against a
// server's --web-port, each as the page behaves (Hello as a viewer, an Input every 100 ms with the
// whole map in view, every message read and every snapshot decoded). Prints one line per run:
//   spectators=N connected=C welcomed=W snapshots_per_s_min=.. snapshots_per_s_median=..
//   kbytes_per_s_total=.. decode_failures=.. closed_early=..
// Used by scripts/server_load.sh --web-spectators N. Exit 0 when every spectator was welcomed and
// none closed before the end, 1 otherwise, 2 on bad arguments.
//
// web_spectator_load --port WEB_PORT [--host 127.0.0.1] [--count 16] [--seconds 20]
//                    [--addresses K]   spread the spectators over 127.0.0.2 .. 127.0.0.(K+1)
#include <sys/resource.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"
#include "swarmfield/protocol/transport/messages.hpp"

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace swarmfield;

protocol::SnapshotAck receiver_ack(std::uint32_t newest) {
  protocol::SnapshotAck ack;
  ack.latest = newest;
  return ack;
}

struct Options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  int count = 16;
  double seconds = 20.0;
  int addresses = 1;
};

class Spectator : public std::enable_shared_from_this<Spectator> {
 public:
  Spectator(net::io_context& io, const Options& options, std::string from)
      : options_(options), from_(std::move(from)), ws_(io), input_timer_(io), receiver_(4 * 16384) {}

  void start() {
    beast::error_code ec;
    auto& socket = beast::get_lowest_layer(ws_).socket();
    socket.open(tcp::v4(), ec);
    if (!ec) socket.bind(tcp::endpoint(net::ip::make_address(from_), 0), ec);
    if (ec) return fail();
    socket.async_connect(tcp::endpoint(net::ip::make_address(options_.host), options_.port),
                         [self = shared_from_this()](beast::error_code connect_ec) {
                           if (connect_ec) return self->fail();
                           self->connected_ = true;
                           self->ws_.async_handshake(self->options_.host, "/ws", [self](beast::error_code hs_ec) {
                             if (hs_ec) return self->fail();
                             self->ws_.binary(true);
                             protocol::Hello hello;
                             hello.role = protocol::Role::kViewer;
                             hello.name = "web-load";
                             self->send(hello);
                             self->read();
                           });
                         });
  }

  void stop() {
    stopped_ = true;
    input_timer_.cancel();
    beast::get_lowest_layer(ws_).close();
  }

  bool connected() const { return connected_; }
  bool welcomed() const { return welcomed_; }
  bool closed_early() const { return closed_early_; }
  std::uint64_t snapshots() const { return snapshots_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t decode_failures() const { return decode_failures_; }

 private:
  void send(const protocol::TcpMessage& message) {
    // One write at a time (Beast's rule): an Input due while one is in flight is skipped.
    if (writing_ || stopped_) return;
    writing_ = true;
    out_ = protocol::encode_tcp_message(message);
    ws_.async_write(net::buffer(out_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec) self->fail();
    });
  }

  void read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec) return self->fail();
      self->bytes_ += n;
      const auto data = self->in_.cdata();
      const auto message = protocol::decode_tcp_message(
          std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(data.data()), data.size()), nullptr,
          protocol::MessageSet::kFromServer);
      if (message) self->on_message(*message);
      self->in_.consume(self->in_.size());
      self->read();
    });
  }

  void on_message(const protocol::TcpMessage& message) {
    if (const auto* welcome = std::get_if<protocol::Welcome>(&message)) {
      welcomed_ = true;
      side_ = static_cast<float>(std::max(welcome->map.width, welcome->map.height)) * welcome->map.cell_size;
      schedule_input();
    } else if (const auto* snapshot = std::get_if<protocol::SnapshotData>(&message)) {
      if (receiver_.receive(snapshot->payload) == protocol::SnapshotReceiver::Result::kDecoded) {
        ++snapshots_;
        newest_ = receiver_.ack().latest;
      } else {
        ++decode_failures_;
      }
    }
  }

  void schedule_input() {
    input_timer_.expires_after(std::chrono::milliseconds(100));
    input_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->stopped_) return;
      protocol::Input input;
      input.sequence = ++self->sequence_;
      input.view_x1 = self->side_;
      input.view_y1 = self->side_;
      input.snapshot_ack = receiver_ack(self->newest_);
      self->send(input);
      self->schedule_input();
    });
  }

  void fail() {
    if (!stopped_) closed_early_ = true;
    stopped_ = true;
    input_timer_.cancel();
  }

  const Options& options_;
  std::string from_;
  websocket::stream<beast::tcp_stream> ws_;
  net::steady_timer input_timer_;
  beast::flat_buffer in_;
  std::vector<std::uint8_t> out_;
  protocol::SnapshotReceiver receiver_;
  float side_ = 0.0f;
  std::uint32_t sequence_ = 0;
  std::uint32_t newest_ = 0;
  std::uint64_t snapshots_ = 0, bytes_ = 0, decode_failures_ = 0;
  bool connected_ = false, welcomed_ = false, closed_early_ = false, stopped_ = false, writing_ = false;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "web_spectator_load: %s\nusage: web_spectator_load --port WEB_PORT [--host 127.0.0.1] [--count N] "
               "[--seconds S] [--addresses K]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return usage(("missing value of " + flag).c_str());
    const std::string value = argv[++i];
    char* end = nullptr;
    if (flag == "--host") {
      options.host = value;
    } else if (flag == "--port") {
      const long port = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || port < 1 || port > 65535) return usage("--port must be 1..65535");
      options.port = static_cast<std::uint16_t>(port);
    } else if (flag == "--count") {
      options.count = static_cast<int>(std::strtol(value.c_str(), &end, 10));
      if (*end != '\0' || options.count < 1 || options.count > 1000) return usage("--count must be 1..1000");
    } else if (flag == "--seconds") {
      options.seconds = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.seconds > 0.0 && options.seconds <= 3600.0)) return usage("--seconds must be in (0, 3600]");
    } else if (flag == "--addresses") {
      options.addresses = static_cast<int>(std::strtol(value.c_str(), &end, 10));
      if (*end != '\0' || options.addresses < 1 || options.addresses > 250) return usage("--addresses must be 1..250");
    } else {
      return usage(("unknown flag " + flag).c_str());
    }
  }
  if (options.port == 0) return usage("--port is required");

  net::io_context io;
  std::vector<std::shared_ptr<Spectator>> spectators;
  for (int i = 0; i < options.count; ++i) {
    const std::string from = "127.0.0." + std::to_string(2 + i % options.addresses);
    spectators.push_back(std::make_shared<Spectator>(io, options, from));
    spectators.back()->start();
  }
  net::steady_timer end(io, std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(options.seconds)));
  end.async_wait([&](beast::error_code) {
    for (auto& s : spectators) s->stop();
  });
  io.run_for(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(options.seconds + 5.0)));

  std::vector<double> rates;
  std::uint64_t bytes = 0, failures = 0;
  int connected = 0, welcomed = 0, closed_early = 0;
  for (const auto& s : spectators) {
    rates.push_back(static_cast<double>(s->snapshots()) / options.seconds);
    bytes += s->bytes();
    failures += s->decode_failures();
    connected += s->connected() ? 1 : 0;
    welcomed += s->welcomed() ? 1 : 0;
    closed_early += s->closed_early() ? 1 : 0;
  }
  std::sort(rates.begin(), rates.end());
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::printf(
      "spectators=%d connected=%d welcomed=%d snapshots_per_s_min=%.1f snapshots_per_s_median=%.1f "
      "kbytes_per_s_total=%.1f decode_failures=%llu closed_early=%d cpu_s=%.1f\n",
      options.count, connected, welcomed, rates.front(), rates[rates.size() / 2],
      static_cast<double>(bytes) / 1024.0 / options.seconds, static_cast<unsigned long long>(failures), closed_early,
      cpu_s);
  return welcomed == options.count && closed_early == 0 ? 0 : 1;
}
