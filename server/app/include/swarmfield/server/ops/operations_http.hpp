#pragma once
// The operations HTTP endpoints (cpp-httplib, its own threads, never the tick thread):
//   GET /healthz  200 "ok" while the tick loop ticked within OperationsState::kStallLimit,
//                 else 503 "tick loop stalled for N s" (a liveness probe: restart me)
//   GET /readyz   200 "ready" once listening and until draining, else 503 (a readiness probe:
//                 send me players)
//   GET /metrics  the last published MetricsSnapshot, Prometheus text format 0.0.4
// HEAD of each is its GET without the body. Any other path is 404, whatever the method; another
// method than GET or HEAD on these three is 405 with `Allow: GET, HEAD`. Requests are small and
// short-lived: one request per connection, which must arrive whole (at most kMaxRequestBytes)
// within kRequestDeadline of its connection being accepted, else it is dropped; bodies above
// 1 KiB are refused and chunked ones not read, a write waits at most kIoTimeout.
// Accepted connections wait in a room polled by one thread, which reads their requests without
// blocking; only once a head and the body it declares have arrived whole does one of kThreads
// workers take the connection up, so idle and trickling connections (from any number of
// addresses) hold no worker.
// At most kMaxWaiting connections wait (the oldest is dropped for a new one), kMaxPerAddress are
// open (one more is answered 429 with `Retry-After: 1` and closed; 503 is /healthz's stalled tick
// loop) and kMaxBusyPerAddress are served at once per peer address (an IPv6 address counts as
// its /64: counted_address, as on the game ports). The port is
// meant for the cluster network (probes, Prometheus), not for players: many addresses can still
// fill the room (kMaxWaiting, the oldest dropped first), delaying a probe by up to kRequestDeadline.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "swarmfield/server/ops/operations_state.hpp"

namespace httplib {
class Server;
}

namespace swarmfield::server {

class OperationsHttp {
 public:
  static constexpr int kThreads = 8;
  /// Connections accepted and not yet sending (beyond it the oldest waiting one is closed).
  static constexpr std::size_t kMaxWaiting = 256;
  /// Open connections per peer address (waiting or served); a new one beyond it is closed at once.
  static constexpr int kMaxPerAddress = 32;
  /// Workers serving one peer address at once.
  static constexpr int kMaxBusyPerAddress = kThreads / 2;
  /// The whole request (request line, headers, body) must arrive within this time.
  static constexpr std::chrono::seconds kRequestDeadline{2};
  /// ... and within this many bytes (a probe or a Prometheus scrape sends a few hundred).
  static constexpr std::size_t kMaxRequestBytes = 16 * 1024;
  /// Longest wait for the socket to take more of the answer.
  static constexpr std::chrono::seconds kIoTimeout{2};
  /// Listen backlog: connections the kernel completes before the listener accepts them (the
  /// kernel caps it at net.core.somaxconn). httplib's own is 5.
  static constexpr int kListenBacklog = 128;

  /// `request_deadline`: kRequestDeadline unless a test needs connections held longer.
  explicit OperationsHttp(const OperationsState& state, std::chrono::milliseconds request_deadline = kRequestDeadline);
  ~OperationsHttp();
  OperationsHttp(const OperationsHttp&) = delete;
  OperationsHttp& operator=(const OperationsHttp&) = delete;

  /// Binds `bind`:`port` (0 = a free port) and starts serving on its own thread. False +
  /// `error` if the address can not be bound.
  bool start(const std::string& bind, std::uint16_t port, std::string& error);
  /// The bound port (after start()).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Stops serving and joins the thread (idempotent; the destructor calls it).
  void stop();

 private:
  const OperationsState& state_;
  std::chrono::milliseconds request_deadline_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
};

}  // namespace swarmfield::server
