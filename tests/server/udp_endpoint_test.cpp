// UdpEndpoint on 127.0.0.1: waiting input datagrams are read all at once, in arrival order, even
// when the io_context is kept busy by a tick timer that is always due (an overloaded server).
#include <doctest/doctest.h>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "swarmfield/protocol/datagram.hpp"
#include "swarmfield/server/client_registry.hpp"
#include "swarmfield/server/udp_endpoint.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Few enough that they fit in the kernel's default receive buffer (~250 small datagrams).
constexpr std::uint32_t kInputs = 64;

struct Fixture {
  asio::io_context io;
  server::ClientRegistry clients{4};
  server::ClientState* client = clients.add(protocol::Role::kPlayer, "p", 1);
  std::vector<std::uint32_t> seen;  // input sequences in the order the handler got them
  server::UdpEndpoint udp{io, clients, [this](server::ClientState&, const protocol::DecodedDatagram& d) {
                            seen.push_back(d.input->sequence);
                          }};
  asio::io_context client_io;
  asio::ip::udp::socket sender{client_io, asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};

  Fixture() {
    std::string error;
    REQUIRE_MESSAGE(udp.open("127.0.0.1", 0, error), error);
  }
  void send(const std::vector<std::uint8_t>& bytes) {
    sender.send_to(asio::buffer(bytes), asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), udp.port()));
  }
  void send_input(std::uint64_t token, std::uint32_t sequence) {
    protocol::Input in;
    in.sequence = sequence;
    in.move_x = 1.0f;
    send(protocol::encode_input_datagram(protocol::DatagramHeader{token, sequence, 0}, in));
  }
  // Loopback delivers synchronously, but give the kernel a moment to queue every datagram.
  void settle() { std::this_thread::sleep_for(20ms); }
};

bool strictly_increasing_from_1(const std::vector<std::uint32_t>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != i + 1) return false;
  return true;
}

}  // namespace

TEST_CASE("udp_endpoint: a loop whose tick timer is always due still gets every waiting input") {
  Fixture f;
  for (std::uint32_t s = 1; s <= kInputs; ++s) f.send_input(f.client->token, s);
  f.settle();
  // The overloaded server: the timer is already expired every time it is armed and each
  // "tick" takes 2 ms. Reading one datagram per io_context pass got ~1 input per tick here, so
  // inputs queued up in the kernel and were applied seconds late.
  asio::steady_timer tick(f.io);
  int ticks = 0;
  std::function<void()> arm = [&] {
    tick.expires_at(Clock::now() - 1ms);
    tick.async_wait([&](std::error_code ec) {
      if (ec) return;
      ++ticks;
      std::this_thread::sleep_for(2ms);
      if (ticks < 5) {
        arm();
      } else {
        f.io.stop();
      }
    });
  };
  arm();
  f.io.run_for(2s);  // bounded even if the stop above never happens
  CHECK(ticks == 5);
  CHECK(f.udp.counters().received == kInputs);
  CHECK(f.seen.size() == kInputs);
  CHECK(strictly_increasing_from_1(f.seen));  // arrival order: the newest is the last applied
}

TEST_CASE("udp_endpoint: drain() reads what waits without the io_context, bounded by its cap") {
  Fixture f;
  for (std::uint32_t s = 1; s <= 10; ++s) f.send_input(f.client->token, s);
  f.send({1, 2, 3});                       // garbage
  f.send_input(f.client->token ^ 1u, 99);  // unknown token
  f.settle();
  CHECK(f.udp.drain(4) == 4);  // the cap holds
  CHECK(f.seen.size() == 4);
  CHECK(f.udp.drain() == 8);   // the rest, in one call
  CHECK(f.udp.drain() == 0);   // nothing waits: returns at once instead of blocking
  CHECK(f.seen.size() == 10);
  CHECK(strictly_increasing_from_1(f.seen));
  CHECK(f.udp.counters().received == 12);
  CHECK(f.udp.counters().bad_datagrams == 1);
  CHECK(f.udp.counters().unknown_token == 1);
  CHECK(f.udp.counters().max_drained == 8);
  REQUIRE(f.client->udp_endpoint.has_value());  // bound to the sender by the first valid input
  CHECK(f.client->last_udp_sequence == 10);
  f.udp.close();
  CHECK(f.udp.drain() == 0);  // closed: nothing, no error
}
