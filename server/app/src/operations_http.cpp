#include "swarmfield/server/operations_http.hpp"

#include <httplib.h>

#include <cstdio>

namespace swarmfield::server {

OperationsHttp::OperationsHttp(const OperationsState& state) : state_(state) {}

OperationsHttp::~OperationsHttp() { stop(); }

bool OperationsHttp::start(const std::string& bind, std::uint16_t port, std::string& error) {
  server_ = std::make_unique<httplib::Server>();
  httplib::Server& s = *server_;
  s.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second server bind the
  // same port and take part of the probes.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  s.set_payload_max_length(1024);
  s.set_read_timeout(2, 0);
  s.set_write_timeout(2, 0);
  s.set_keep_alive_max_count(16);
  s.set_keep_alive_timeout(2);
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    const auto age = state_.tick_age(OperationsState::Clock::now());
    if (age <= OperationsState::kStallLimit) {
      res.set_content("ok\n", "text/plain");
      return;
    }
    res.status = 503;
    if (age == OperationsState::Clock::duration::max()) {
      res.set_content("tick loop not started\n", "text/plain");
    } else {
      char text[64];
      std::snprintf(text, sizeof text, "tick loop stalled for %.1f s\n", std::chrono::duration<double>(age).count());
      res.set_content(text, "text/plain");
    }
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (state_.ready()) {
      res.set_content("ready\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content(state_.draining() ? "draining\n" : "not listening yet\n", "text/plain");
    }
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(state_.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  int bound = port;
  if (port == 0) {
    bound = s.bind_to_any_port(bind);
  } else if (!s.bind_to_port(bind, port)) {
    bound = -1;
  }
  if (bound <= 0) {
    error = "can not listen for HTTP on " + bind + ":" + std::to_string(port) + " (--http-port, --http-bind)";
    server_.reset();
    return false;
  }
  port_ = static_cast<std::uint16_t>(bound);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the loop runs would not stop it: wait until it does (a few ms at most).
  for (int i = 0; i < 1000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

void OperationsHttp::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace swarmfield::server
