#pragma once
// Shared by the loopback tests (the real swarmfield-server binary on 127.0.0.1): ports from
// the log, the Hello/Welcome/map handshake, and UDP inputs (summary values: summary_line.hpp).
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "raw_client.hpp"
#include "server_process.hpp"
#include "summary_line.hpp"
#include "swarmfield/protocol/transport/map_transfer.hpp"

namespace swarmfield::test {

struct Ports {
  std::uint16_t tcp = 0;
  std::uint16_t udp = 0;
};

// Parses "listening tcp=P udp=Q" from the server log (waiting up to `timeout` for it).
inline std::optional<Ports> wait_listening(ServerProcess& server,
                                          std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto line = server.wait_for_log("listening tcp=", timeout);
  if (!line) return std::nullopt;
  const long long tcp = summary_value(*line, "tcp");
  const long long udp = summary_value(*line, "udp");
  if (tcp <= 0 || tcp > 65535 || udp <= 0 || udp > 65535) return std::nullopt;
  return Ports{static_cast<std::uint16_t>(tcp), static_cast<std::uint16_t>(udp)};
}

inline protocol::Hello hello(protocol::Role role, std::uint16_t version = protocol::kProtocolVersion) {
  protocol::Hello h;
  h.protocol_version = version;
  h.role = role;
  h.name = "loopback-test";
  return h;
}

// Hello -> Welcome + every MapChunk; checks the map decompresses to width*height bytes.
// `from`: the client's address (another 127/8 address stands in for another host).
inline std::optional<protocol::Welcome> join(RawClient& c, std::uint16_t port, protocol::Role role,
                                             int receive_buffer_bytes = 0, const char* from = "127.0.0.1") {
  REQUIRE(c.connect(port, receive_buffer_bytes, from));
  REQUIRE(c.send(hello(role)));
  auto welcome = c.read_until<protocol::Welcome>(std::chrono::seconds(5));
  if (!welcome) return std::nullopt;
  protocol::MapAssembler assembler(welcome->map);
  for (std::uint32_t i = 0; i < welcome->map.chunk_count; ++i) {
    auto chunk = c.read_until<protocol::MapChunk>(std::chrono::seconds(5));
    REQUIRE(chunk.has_value());
    CHECK(assembler.add(*chunk));
  }
  REQUIRE(assembler.complete());
  auto costs = assembler.finish();
  REQUIRE(costs.has_value());
  CHECK(costs->size() == static_cast<std::size_t>(welcome->map.width) * static_cast<std::size_t>(welcome->map.height));
  c.udp_session(welcome->udp);
  return welcome;
}

inline const protocol::PlayerState* find_player(const protocol::SnapshotHeader& s, std::uint32_t id) {
  for (const auto& p : s.players)
    if (p.id == id) return &p;
  return nullptr;
}

// Inputs with increasing sequences.
struct Inputs {
  std::uint32_t sequence = 0;
  protocol::Input make(float mx, float my, float view_side, std::uint64_t time_us) {
    protocol::Input in;
    in.sequence = ++sequence;
    in.move_x = mx;
    in.move_y = my;
    in.view_x1 = view_side;
    in.view_y1 = view_side;
    in.client_time_us = time_us;
    return in;
  }
};

// A 64 x 64 city on a free port; `extra` flags are appended (flags must not repeat).
inline std::vector<std::string> small_city(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--port", "0", "--bind", "127.0.0.1", "--city-size", "64"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Starts the server with `args`; it must exit by itself within `timeout` with status `code`, its
// stderr holding each of `lines` (each checked on its own, named when missing). Returns its
// stderr, for checks of what must not be there.
inline std::string expect_exit(const std::vector<std::string>& args, int code, const std::vector<std::string>& lines = {},
                               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  ServerProcess server(args);
  REQUIRE(server.started());
  const auto exited = server.wait_exit(timeout);
  const std::string err = server.err();
  INFO("stderr: " << err);
  REQUIRE_MESSAGE(exited.has_value(), "the server did not exit within the timeout");
  CHECK(*exited == code);
  for (const std::string& line : lines) CHECK_MESSAGE(err.find(line) != std::string::npos, "missing: " << line);
  return err;
}

// Starts the server with `args`, which it must refuse: it exits with status 2 within 5 s.
// Returns its stderr (the error).
inline std::string refused_start_error(const std::vector<std::string>& args) {
  return expect_exit(args, 2, {}, std::chrono::seconds(5));
}

// Stops the server with SIGTERM and returns its summary line (stdout).
inline std::string stop_and_summarize(ServerProcess& server) {
  server.signal(SIGTERM);
  REQUIRE(server.wait_exit(std::chrono::seconds(10)) == std::optional<int>(0));
  return server.out();
}

inline std::uint64_t now_us() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace swarmfield::test
