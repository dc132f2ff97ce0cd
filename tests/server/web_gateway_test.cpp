// The browser spectator's gateway (issue 23, net/web_gateway.hpp) against the real server binary
// on 127.0.0.1: the page over HTTP, a spectator's session over a WebSocket (the game protocol's
// frames as binary messages), what the gateway refuses, and the per-address limits applied to the
// browser's address (other 127/8 addresses stand in for other hosts). Every wait is bounded.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

// Not loopback_support.hpp: it brings standalone Asio, which can not share a translation unit
// with Boost.Asio (both define the same global helper namespaces).
#include "server_process.hpp"
#include "summary_line.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"
#include "swarmfield/protocol/transport/connect_token.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/map_transfer.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using test::ServerProcess;
using test::summary_value;

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

/// A folder with a stand-in page (the gateway serves whatever the folder holds).
struct PageFolder {
  PageFolder() {
    char dir_template[] = "/tmp/swarmfield-web-test-XXXXXX";
    const char* made = mkdtemp(dir_template);
    REQUIRE(made != nullptr);
    dir = made;
    std::ofstream(dir + "/index.html") << "<!doctype html><title>swarmfield</title><script src=\"app.js\"></script>";
    std::ofstream(dir + "/app.js") << "console.log('spectator');";
  }
  ~PageFolder() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string dir;
};

/// Bounds every blocking read and write on `socket` (Beast's synchronous calls have no timer).
void bound_socket(tcp::socket& socket, std::chrono::milliseconds limit) {
  timeval tv{};
  tv.tv_sec = static_cast<long>(limit.count() / 1000);
  tv.tv_usec = static_cast<long>((limit.count() % 1000) * 1000);
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

tcp::socket connect_from(net::io_context& io, std::uint16_t port, const char* from, int receive_buffer = 0) {
  tcp::socket socket(io);
  socket.open(tcp::v4());
  if (receive_buffer > 0) socket.set_option(net::socket_base::receive_buffer_size(receive_buffer));
  socket.bind(tcp::endpoint(net::ip::make_address(from), 0));
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  bound_socket(socket, 5000ms);
  return socket;
}

struct HttpAnswer {
  int status = 0;
  std::string content_type;
  std::string body;
};

HttpAnswer http_get(std::uint16_t port, const std::string& target, http::verb verb = http::verb::get) {
  net::io_context io;
  tcp::socket socket = connect_from(io, port, "127.0.0.1");
  http::request<http::empty_body> request(verb, target, 11);
  request.set(http::field::host, "127.0.0.1");
  http::write(socket, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  beast::error_code ec;
  http::read(socket, buffer, response, ec);
  if (ec) return {};
  return {static_cast<int>(response.result_int()), std::string(response[http::field::content_type]), response.body()};
}

/// Writes `request` as is and reads the whole answer (the gateway closes after one), bounded by
/// the socket's 5 s.
std::string raw_exchange(std::uint16_t port, const std::string& request) {
  net::io_context io;
  tcp::socket socket = connect_from(io, port, "127.0.0.1");
  beast::error_code ec;
  net::write(socket, net::buffer(request), ec);
  std::string answer;
  std::array<char, 4096> chunk{};
  while (!ec && answer.size() < 64 * 1024) {
    const std::size_t n = socket.read_some(net::buffer(chunk), ec);
    answer.append(chunk.data(), n);
  }
  return answer;
}

/// A browser's WebSocket, as the page opens it.
class WsClient {
 public:
  bool connect(std::uint16_t port, const char* from = "127.0.0.1", const std::string& target = "/ws",
               int receive_buffer = 0) {
    try {
      ws_ = std::make_unique<websocket::stream<tcp::socket>>(connect_from(io_, port, from, receive_buffer));
      ws_->handshake("127.0.0.1", target);
      ws_->binary(true);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }
  bool send(const protocol::TcpMessage& message) {
    const auto bytes = protocol::encode_tcp_message(message);
    beast::error_code ec;
    ws_->write(net::buffer(bytes), ec);
    return !ec;
  }
  bool send_raw(const std::vector<std::uint8_t>& bytes) {
    beast::error_code ec;
    ws_->write(net::buffer(bytes), ec);
    return !ec;
  }
  bool send_text(const std::string& text) {
    beast::error_code ec;
    ws_->text(true);
    ws_->write(net::buffer(text), ec);
    ws_->binary(true);
    return !ec;
  }
  /// The next message (each read bounded by the socket's 5 s); nullopt once the stream ends.
  std::optional<protocol::TcpMessage> read() {
    beast::flat_buffer buffer;
    beast::error_code ec;
    ws_->read(buffer, ec);
    if (ec) return std::nullopt;
    const auto data = buffer.cdata();
    return protocol::decode_tcp_message(
        std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(data.data()), data.size()), nullptr,
        protocol::MessageSet::kFromServer);
  }
  template <class T>
  std::optional<T> read_until(int max_messages = 400) {
    for (int i = 0; i < max_messages; ++i) {
      auto message = read();
      if (!message) return std::nullopt;
      if (auto* wanted = std::get_if<T>(&*message)) return *wanted;
    }
    return std::nullopt;
  }

 private:
  net::io_context io_;
  std::unique_ptr<websocket::stream<tcp::socket>> ws_;
};

/// Says `hello` straight to the game port (TCP framing) from `from`; the server's first answer.
std::optional<protocol::TcpMessage> game_port_answer(std::uint16_t game_port, const protocol::Hello& hello,
                                                     const char* from) {
  net::io_context io;
  tcp::socket socket = connect_from(io, game_port, from);
  std::vector<std::uint8_t> frame;
  REQUIRE(protocol::append_frame(protocol::encode_tcp_message(hello), frame));
  net::write(socket, net::buffer(frame));
  protocol::FrameDecoder decoder;
  std::vector<std::uint8_t> payload, buffer(64 * 1024);
  for (int i = 0; i < 50; ++i) {
    beast::error_code ec;
    const std::size_t n = socket.read_some(net::buffer(buffer), ec);
    if (ec) break;
    decoder.feed(std::span<const std::uint8_t>(buffer.data(), n));
    if (decoder.next(payload) == protocol::FrameDecoder::Status::kFrame) return protocol::decode_tcp_message(payload);
  }
  return std::nullopt;
}

protocol::Hello viewer_hello() {
  protocol::Hello hello;
  hello.role = protocol::Role::kViewer;
  hello.name = "browser-test";
  return hello;
}

/// What the page does first: a viewer's Hello through `ws`, then the server's Welcome (nullopt
/// when the send fails or no Welcome comes).
std::optional<protocol::Welcome> hello_as_viewer(WsClient& ws) {
  if (!ws.send(viewer_hello())) return std::nullopt;
  return ws.read_until<protocol::Welcome>();
}

// A 64 x 64 city on free ports with `extra` flags.
std::vector<std::string> small_city(std::vector<std::string> extra) {
  std::vector<std::string> args = {"--port", "0", "--bind", "127.0.0.1", "--city-size", "64"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::uint16_t wait_web_port(ServerProcess& server) {
  const auto line = server.wait_for_log("web listening port=", 10s);
  REQUIRE_MESSAGE(line.has_value(), server.err());
  const long long port = summary_value(*line, "port");
  REQUIRE(port > 0);
  REQUIRE(port <= 65535);
  return static_cast<std::uint16_t>(port);
}

}  // namespace

TEST_CASE("web: the page over HTTP, and a spectator over a WebSocket gets the Welcome, the map and decodable snapshots") {
  PageFolder page;
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir, "--agents", "300"}));
  const std::uint16_t port = wait_web_port(server);

  const HttpAnswer index = http_get(port, "/");
  CHECK(index.status == 200);
  CHECK(index.content_type.find("text/html") == 0);
  CHECK(index.body.find("<title>swarmfield</title>") != std::string::npos);
  const HttpAnswer script = http_get(port, "/app.js?v=1");
  CHECK(script.status == 200);
  CHECK(script.content_type.find("text/javascript") == 0);
  CHECK(http_get(port, "/missing.js").status == 404);
  CHECK(http_get(port, "/../web_gateway_test.cpp").status == 404);
  CHECK(http_get(port, "/%2e%2e/etc/passwd").status == 404);
  CHECK(http_get(port, "/", http::verb::post).status == 405);

  WsClient ws;
  REQUIRE(ws.connect(port));
  const auto welcome = hello_as_viewer(ws);
  REQUIRE(welcome.has_value());
  CHECK(welcome->player_id == 0);
  CHECK(welcome->map.width == 64);
  protocol::MapAssembler assembler(welcome->map);
  for (std::uint32_t i = 0; i < welcome->map.chunk_count; ++i) {
    const auto chunk = ws.read_until<protocol::MapChunk>();
    REQUIRE(chunk.has_value());
    CHECK(assembler.add(*chunk));
  }
  REQUIRE(assembler.complete());
  CHECK(assembler.finish().has_value());

  // Snapshots as a TCP viewer gets them: each a delta against the one before, all decoding.
  protocol::SnapshotReceiver receiver;
  protocol::Input input;
  input.view_x1 = 64.0f;
  input.view_y1 = 64.0f;
  input.sequence = 1;
  REQUIRE(ws.send(input));
  std::size_t decoded = 0, agents = 0;
  for (int i = 0; i < 5; ++i) {
    const auto snapshot = ws.read_until<protocol::SnapshotData>();
    REQUIRE(snapshot.has_value());
    std::string error;
    const auto result = receiver.receive(snapshot->payload, &error);
    CHECK_MESSAGE(result == protocol::SnapshotReceiver::Result::kDecoded, error);
    if (result == protocol::SnapshotReceiver::Result::kDecoded) {
      ++decoded;
      agents = receiver.frame().size();
    }
  }
  CHECK(decoded == 5);
  CHECK(agents > 0);

  // The server stopping: its Bye reaches the browser before the WebSocket closes (the page shows
  // why), relayed after the game port has closed its end.
  server.signal(SIGTERM);
  const auto bye = ws.read_until<protocol::Bye>();
  REQUIRE(bye.has_value());
  CHECK_FALSE(bye->reason.empty());
  CHECK_FALSE(ws.read().has_value());
  REQUIRE(server.wait_exit(10s) == std::optional<int>(0));
  const std::string summary = server.out();
  CHECK(summary_value(summary, "web_pages") >= 2);
  CHECK(summary_value(summary, "web_sockets") == 1);
}

TEST_CASE("web: a first message that is not a viewer's Hello, and text messages, are refused with a reason") {
  PageFolder page;
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir}));
  const std::uint16_t port = wait_web_port(server);

  // Each first message is answered with an Error naming what was wrong, then the close.
  const auto refused_with = [&](const std::function<bool(WsClient&)>& say, const char* needle) {
    WsClient ws;
    REQUIRE(ws.connect(port));
    REQUIRE(say(ws));
    const auto error = ws.read_until<protocol::Error>(4);
    REQUIRE(error.has_value());
    CHECK(error->reason.find(needle) != std::string::npos);
    CHECK_FALSE(ws.read().has_value());  // closed
  };
  SUBCASE("a player's Hello: the page is a spectator") {
    protocol::Hello hello = viewer_hello();
    hello.role = protocol::Role::kPlayer;
    refused_with([&](WsClient& ws) { return ws.send(hello); }, "Viewer role");
  }
  SUBCASE("an Input before the Hello") {
    refused_with([](WsClient& ws) { return ws.send(protocol::Input{}); }, "first message must be a Hello");
  }
  SUBCASE("a text message") {
    refused_with([](WsClient& ws) { return ws.send_text("{\"hello\": 1}"); }, "text messages");
  }
  SUBCASE("a message above the client frame limit closes the WebSocket") {
    WsClient ws;
    REQUIRE(ws.connect(port));
    REQUIRE(hello_as_viewer(ws).has_value());
    REQUIRE(ws.send_raw(std::vector<std::uint8_t>(protocol::kMaxClientFrameBytes + 1, 0)));
    bool ended = false;
    for (int i = 0; i < 400 && !ended; ++i) ended = !ws.read().has_value();
    CHECK(ended);
  }
  CHECK(server.running());
}

TEST_CASE("web: the game port's per-address limits count the browser's address, not the gateway's") {
  PageFolder page;
  // Two connections and one slot per address: as loopback, a second browser anywhere would be
  // refused; as itself, each host keeps its own share.
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir, "--max-connections-per-address", "2",
                                   "--max-clients-per-address", "1"}));
  const std::uint16_t port = wait_web_port(server);

  WsClient a, b, c;
  REQUIRE(a.connect(port, "127.0.0.2"));
  REQUIRE(b.connect(port, "127.0.0.3"));
  REQUIRE(c.connect(port, "127.0.0.4"));
  for (WsClient* ws : {&a, &b, &c}) REQUIRE(ws->send(viewer_hello()));
  CHECK(a.read_until<protocol::Welcome>().has_value());
  CHECK(b.read_until<protocol::Welcome>().has_value());
  CHECK(c.read_until<protocol::Welcome>().has_value());

  // A second browser on 127.0.0.2 is over that host's one slot.
  WsClient again;
  REQUIRE(again.connect(port, "127.0.0.2"));
  REQUIRE(again.send(viewer_hello()));
  const auto refused = again.read_until<protocol::Error>(8);
  REQUIRE(refused.has_value());
  CHECK(refused->code == protocol::ErrorCode::kServerFull);
  CHECK(server.running());
}

TEST_CASE("web: a browser that reads slowly gets fresh snapshots after its stall, not a backlog") {
  PageFolder page;
  // Snapshots of a few KiB (10,000 agents spreading over a 128 city), as a crowded view has.
  ServerProcess server({"--port", "0", "--bind", "127.0.0.1", "--city-size", "128", "--web-port", "0", "--web-root",
                        page.dir, "--agents", "10000"});
  const std::uint16_t port = wait_web_port(server);
  WsClient ws;
  REQUIRE(ws.connect(port, "127.0.0.1", "/ws", 4096));
  REQUIRE(hello_as_viewer(ws).has_value());
  protocol::SnapshotReceiver receiver;
  protocol::Input input;
  input.sequence = 1;
  input.view_x1 = 128.0f;
  input.view_y1 = 128.0f;
  REQUIRE(ws.send(input));
  std::size_t bytes_read = 0;
  const auto decode = [&](const protocol::SnapshotData& s) {
    bytes_read += s.payload.size();
    std::string error;
    const auto result = receiver.receive(s.payload, &error);
    CHECK_MESSAGE(result == protocol::SnapshotReceiver::Result::kDecoded, error);
    return receiver.header().tick;
  };
  const auto first = ws.read_until<protocol::SnapshotData>();
  REQUIRE(first.has_value());
  const std::uint32_t first_tick = decode(*first);
  const auto first_at = std::chrono::steady_clock::now();

  // 10 s of inputs (it stays a live client) and no reads: ~200 snapshots' worth at 20 Hz.
  for (int i = 0; i < 50; ++i) {
    input.sequence += 1;
    REQUIRE(ws.send(input));
    std::this_thread::sleep_for(200ms);
  }
  // What the browser reads now reaches the present within what the small buffers held: a
  // gateway that queued the backlog (or a server that did) would hand it ~200 old snapshots.
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_at).count();
  const auto now_tick = static_cast<std::uint32_t>(first_tick + 30.0 * (elapsed - 1.5));
  int snapshots_read = 0;
  bytes_read = 0;
  std::uint32_t tick = first_tick;
  while (tick < now_tick && snapshots_read < 400) {
    const auto s = ws.read_until<protocol::SnapshotData>();
    REQUIRE(s.has_value());
    tick = decode(*s);
    ++snapshots_read;
  }
  INFO("snapshots read to reach the present: " << snapshots_read << " (" << bytes_read << " bytes), tick " << tick
                                                << " of ~" << now_tick);
  CHECK(tick >= now_tick);
  // Kernel buffers (the gateway's 64 KiB send buffer, doubled by Linux; 16 KiB each side of the
  // relay) and two messages: ~200 KiB. The stall sent ~200 snapshots of ~4.5 KiB.
  CHECK(bytes_read <= 320u * 1024u);
  CHECK(server.running());
}

TEST_CASE("web: with --auth tokens and --web-spectators-open a browser watches without a token, nobody else does") {
  PageFolder page;
  const std::string key_path = page.dir + "/key.hex";
  std::ofstream(key_path) << protocol::format_token_key(protocol::make_token_key()) << "\n";
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir, "--auth", "tokens", "--key-file",
                                   key_path, "--web-spectators-open"}));
  const std::uint16_t port = wait_web_port(server);
  const auto tcp_line = server.wait_for_log("listening tcp=", 1s);
  REQUIRE(tcp_line.has_value());
  const auto game_port = static_cast<std::uint16_t>(summary_value(*tcp_line, "tcp"));

  WsClient ws;
  REQUIRE(ws.connect(port));
  const auto welcome = hello_as_viewer(ws);
  REQUIRE(welcome.has_value());
  CHECK(welcome->player_id == 0);
  CHECK(ws.read_until<protocol::SnapshotData>().has_value());

  // The same Hello straight to the game port: refused, a token is needed there.
  const auto answer = game_port_answer(game_port, viewer_hello(), "127.0.0.1");
  REQUIRE(answer.has_value());
  const auto* error = std::get_if<protocol::Error>(&*answer);
  REQUIRE(error != nullptr);
  CHECK(error->reason.find("connect token") != std::string::npos);
}

// Open spectators come without a token, so no backend decided they may: they get open mode's share
// of the spectator slots per address (an eighth). Before, --auth tokens meant no share at all, and
// two addresses at the gateway's 16 connections each took every spectator slot of a 64-slot
// server (found by a hostile trial).
TEST_CASE("web: with --web-spectators-open one address holds at most an eighth of the spectator slots") {
  PageFolder page;
  const std::string key_path = page.dir + "/key.hex";
  std::ofstream(key_path) << protocol::format_token_key(protocol::make_token_key()) << "\n";
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir, "--auth", "tokens", "--key-file",
                                   key_path, "--web-spectators-open", "--max-web-spectators", "16"}));
  const std::uint16_t port = wait_web_port(server);
  WsClient a, b, c;
  REQUIRE(a.connect(port));
  REQUIRE(hello_as_viewer(a).has_value());
  REQUIRE(b.connect(port));
  REQUIRE(hello_as_viewer(b).has_value());
  REQUIRE(c.connect(port));
  REQUIRE(c.send(viewer_hello()));
  const auto refused = c.read_until<protocol::Error>(8);
  REQUIRE(refused.has_value());
  CHECK(refused->reason.find("server full for your address") != std::string::npos);
  CHECK(refused->reason.find("2 of 16") != std::string::npos);
  // The two admitted still watch.
  CHECK(a.read_until<protocol::SnapshotData>().has_value());
  CHECK(b.read_until<protocol::SnapshotData>().has_value());
}

TEST_CASE("web: a missing page is refused at start with what to do, as a usage error (exit 2) before the map loads") {
  SUBCASE("no folder") {
    ServerProcess server(small_city({"--web-port", "0", "--web-root", "/nonexistent-swarmfield-web"}));
    REQUIRE(server.wait_exit(10s) == std::optional<int>(2));
    CHECK(server.err().find("density limit") == std::string::npos);  // logged once the map is loaded: not reached
    CHECK(server.err().find("the browser page is not built") != std::string::npos);
    CHECK(server.err().find("--web-root") != std::string::npos);
    CHECK(server.err().find("listening tcp=") == std::string::npos);  // told before any port opens
  }
  SUBCASE("index.html without app.js (the page's sources, not its build)") {
    PageFolder page;
    std::filesystem::remove(page.dir + "/app.js");
    ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir}));
    REQUIRE(server.wait_exit(10s) == std::optional<int>(2));
    CHECK(server.err().find("no index.html and app.js") != std::string::npos);
  }
}

TEST_CASE("web: files that are no page's (dotfiles, scripts) are not served") {
  PageFolder page;
  std::ofstream(page.dir + "/.env") << "SECRET=1";
  std::ofstream(page.dir + "/build.sh") << "#!/bin/sh";
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir}));
  const std::uint16_t port = wait_web_port(server);
  CHECK(http_get(port, "/app.js").status == 200);
  CHECK(http_get(port, "/.env").status == 404);
  CHECK(http_get(port, "/build.sh").status == 404);
}

TEST_CASE("web: a link in the page folder to a file outside it is not served; one to a file inside is") {
  // Before: a .txt link to any file the server could read was served to anyone.
  PageFolder page;
  PageFolder outside;
  std::ofstream(outside.dir + "/secret.txt") << "SECRET=1";
  std::ofstream(page.dir + "/notes.txt") << "notes";
  std::filesystem::create_symlink(outside.dir + "/secret.txt", page.dir + "/secret.txt");
  std::filesystem::create_symlink(page.dir + "/notes.txt", page.dir + "/readme.txt");
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir}));
  const std::uint16_t port = wait_web_port(server);
  CHECK(http_get(port, "/notes.txt").status == 200);
  CHECK(http_get(port, "/readme.txt").status == 200);
  const HttpAnswer secret = http_get(port, "/secret.txt");
  CHECK(secret.status == 404);
  CHECK(secret.body.find("SECRET") == std::string::npos);
}

TEST_CASE("web: spectators can not take the players' slots, and a spectator's slot is free when it leaves") {
  PageFolder page;
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir, "--max-web-spectators", "2",
                                   "--max-clients-per-address", "1"}));
  const std::uint16_t port = wait_web_port(server);
  const auto tcp_line = server.wait_for_log("listening tcp=", 1s);
  REQUIRE(tcp_line.has_value());
  const auto game_port = static_cast<std::uint16_t>(summary_value(*tcp_line, "tcp"));

  auto a = std::make_unique<WsClient>();
  WsClient b, c;
  REQUIRE(a->connect(port, "127.0.0.2"));
  REQUIRE(b.connect(port, "127.0.0.3"));
  REQUIRE(a->send(viewer_hello()));
  REQUIRE(b.send(viewer_hello()));
  REQUIRE(a->read_until<protocol::Welcome>().has_value());
  REQUIRE(b.read_until<protocol::Welcome>().has_value());
  // A third spectator is over --max-web-spectators: told so, before the game port sees it.
  REQUIRE(c.connect(port, "127.0.0.4"));
  const auto full = c.read_until<protocol::Error>(4);
  REQUIRE(full.has_value());
  CHECK(full->code == protocol::ErrorCode::kServerFull);
  CHECK(full->reason.find("spectators full") != std::string::npos);

  // A player still joins the game port.
  protocol::Hello player = viewer_hello();
  player.role = protocol::Role::kPlayer;
  const auto joined = game_port_answer(game_port, player, "127.0.0.5");
  REQUIRE(joined.has_value());
  CHECK(std::holds_alternative<protocol::Welcome>(*joined));

  // The first spectator leaves (its tab closes): its address's one slot is free at once, not
  // held for --reconnect-grace (a page never resumes).
  a.reset();
  REQUIRE(server.wait_for_log("'browser-test' left", 5s).has_value());
  WsClient again;
  REQUIRE(again.connect(port, "127.0.0.2"));
  REQUIRE(again.send(viewer_hello()));
  CHECK(again.read_until<protocol::Welcome>().has_value());
  CHECK(server.err().find("client 1 'browser-test' lost its connection; its session waits") == std::string::npos);
}

TEST_CASE("web: malformed requests are answered with their status, refused connections with 503 and a reason") {
  PageFolder page;
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir, "--max-connections-per-address", "1"}));
  const std::uint16_t port = wait_web_port(server);
  const auto raw_answer = [&](const std::string& request) {
    net::io_context io;
    tcp::socket socket = connect_from(io, port, "127.0.0.2");
    beast::error_code ec;
    net::write(socket, net::buffer(request), ec);
    std::string answer(512, '\0');
    const std::size_t n = socket.read_some(net::buffer(answer), ec);
    answer.resize(ec && n == 0 ? 0 : n);
    return answer;
  };
  CHECK(raw_answer("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n").find("431") !=
        std::string::npos);
  const std::string with_body = raw_answer("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  CHECK(with_body.find("413") != std::string::npos);
  CHECK(with_body.find("no request body is taken here") != std::string::npos);  // was "bad request"
  CHECK(raw_answer("not http at all\r\n\r\n").find("400") != std::string::npos);

  // One connection per address: a second one from 127.0.0.3 while the first idles gets 503.
  net::io_context io;
  tcp::socket idle = connect_from(io, port, "127.0.0.3");
  std::this_thread::sleep_for(200ms);  // accepted before the next
  tcp::socket second = connect_from(io, port, "127.0.0.3");
  std::string answer(512, '\0');
  beast::error_code ec;
  const std::size_t n = second.read_some(net::buffer(answer), ec);
  answer.resize(n);
  CHECK(answer.find("503") != std::string::npos);
  CHECK(answer.find("too many connections from your address") != std::string::npos);
  CHECK(server.running());
}

TEST_CASE("web: another method than GET/HEAD gets 405 with Allow; a WebSocket asked for over HTTP/1.0, or /ws without one, gets 426") {
  // Before: the 405 named no allowed methods, and the HTTP/1.0 upgrade was told 404 (no page).
  PageFolder page;
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir}));
  const std::uint16_t port = wait_web_port(server);
  for (const char* method : {"OPTIONS", "POST", "PUT", "DELETE", "PATCH", "FROB"}) {
    for (const char* target : {"/", "/app.js", "/ws"}) {
      INFO(method << " " << target);
      const std::string request = std::string(method) + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
      const std::string answer = raw_exchange(port, request);
      CHECK(answer.rfind("HTTP/1.1 405 ", 0) == 0);
      CHECK(answer.find("\r\nAllow: GET, HEAD\r\n") != std::string::npos);
    }
  }
  const std::string head = raw_exchange(port, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(head.rfind("HTTP/1.1 200 ", 0) == 0);
  // A refused HEAD is the head alone too (a body after it broke the framing of a kept-alive client).
  for (const char* target : {"/nope", "/ws"}) {
    const std::string refused = raw_exchange(port, std::string("HEAD ") + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    INFO(refused);
    const std::size_t end = refused.find("\r\n\r\n");
    REQUIRE(end != std::string::npos);
    CHECK(refused.size() == end + 4);
    CHECK(refused.find("\r\nContent-Length: ") != std::string::npos);
  }
  // The stream's address opened as a page says what it is (it was 404 "not found").
  const std::string plain_ws = raw_exchange(port, "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n");
  INFO(plain_ws);
  CHECK(plain_ws.rfind("HTTP/1.1 426 ", 0) == 0);
  CHECK(plain_ws.find("\r\nUpgrade: websocket\r\n") != std::string::npos);
  CHECK(plain_ws.find("a WebSocket") != std::string::npos);

  const std::string old_upgrade = raw_exchange(
      port, "GET /ws HTTP/1.0\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  INFO(old_upgrade);
  CHECK(old_upgrade.rfind("HTTP/1.0 426 ", 0) == 0);
  CHECK(old_upgrade.find("\r\nUpgrade: websocket\r\n") != std::string::npos);
  CHECK(old_upgrade.find("needs HTTP/1.1") != std::string::npos);
  // The same over HTTP/1.1 is a spectator's stream.
  WsClient ws;
  REQUIRE(ws.connect(port));
  CHECK(hello_as_viewer(ws).has_value());
}

TEST_CASE("web: WebSocket frames sent with the upgrade request, before the 101, are the stream's first frames") {
  // Against RFC 6455 (a client waits for the 101), but seen from scripts: the upgrade request and
  // the Hello in one write. Before, the bytes read with the request head were dropped and the
  // client was told after 3 s that it sent no Hello.
  PageFolder page;
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir}));
  const std::uint16_t port = wait_web_port(server);
  net::io_context io;
  tcp::socket socket = connect_from(io, port, "127.0.0.1");
  bound_socket(socket, 5000ms);
  std::string bytes =
      "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  // One masked binary frame holding the Hello (a client's frames are masked).
  const std::vector<std::uint8_t> hello = protocol::encode_tcp_message(viewer_hello());
  REQUIRE(hello.size() < 126);
  const std::uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
  bytes.push_back(static_cast<char>(0x82));
  bytes.push_back(static_cast<char>(0x80 | hello.size()));
  for (const std::uint8_t m : mask) bytes.push_back(static_cast<char>(m));
  for (std::size_t i = 0; i < hello.size(); ++i) bytes.push_back(static_cast<char>(hello[i] ^ mask[i % 4]));
  net::write(socket, net::buffer(bytes));
  // The 101, then the server's first message (unmasked frames): the Welcome.
  std::vector<std::uint8_t> in;
  std::size_t body = std::string::npos;
  std::optional<protocol::TcpMessage> first;
  for (int i = 0; i < 200 && !first; ++i) {
    std::array<std::uint8_t, 4096> chunk{};
    beast::error_code ec;
    const std::size_t n = socket.read_some(net::buffer(chunk), ec);
    if (ec) break;
    in.insert(in.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string text(in.begin(), in.end());
    if (body == std::string::npos) {
      const std::size_t end = text.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      REQUIRE(text.rfind("HTTP/1.1 101", 0) == 0);
      body = end + 4;
    }
    if (in.size() < body + 2) continue;
    std::size_t length = in[body + 1] & 0x7Fu, header = 2;
    if (length == 126) {
      if (in.size() < body + 4) continue;
      length = (static_cast<std::size_t>(in[body + 2]) << 8) | in[body + 3];
      header = 4;
    } else if (length == 127) {
      if (in.size() < body + 10) continue;
      length = 0;
      for (int b = 0; b < 8; ++b) length = (length << 8) | in[body + 2 + static_cast<std::size_t>(b)];
      header = 10;
    }
    if (in.size() < body + header + length) continue;
    first = protocol::decode_tcp_message(std::span<const std::uint8_t>(in.data() + body + header, length), nullptr,
                                         protocol::MessageSet::kFromServer);
  }
  REQUIRE(first.has_value());
  CHECK(std::holds_alternative<protocol::Welcome>(*first));
  CHECK(server.running());
}

TEST_CASE("web: a port full of connections that trickle their request still takes a browser: the oldest gives way") {
  // Before: 100 addresses x 10 connections, each sending a request head a byte at a time, held
  // all the port's places for as long as they kept it up, and every browser got 503.
  PageFolder page;
  ServerProcess server(small_city({"--web-port", "0", "--web-root", page.dir, "--max-clients", "1",
                                   "--max-connections-per-address", "16"}));
  const std::uint16_t port = wait_web_port(server);
  // --max-clients 1: the web port holds 1 + 128 connections.
  constexpr int kHeld = 9 * 16;
  net::io_context io;
  std::vector<tcp::socket> held;
  for (int i = 0; i < kHeld; ++i) {
    char from[32];
    std::snprintf(from, sizeof from, "127.0.1.%d", 1 + i / 16);
    held.push_back(connect_from(io, port, from));
    beast::error_code ec;
    net::write(held.back(), net::buffer(std::string("GET / HTTP/1.1\r\n")), ec);  // never finished
  }
  std::this_thread::sleep_for(700ms);  // past kEvictableAfter
  const HttpAnswer page_answer = http_get(port, "/");
  CHECK(page_answer.status == 200);
  // Some of the held ones were closed for it (or refused, beyond the port's places).
  int closed = 0;
  for (tcp::socket& s : held) {
    s.non_blocking(true);
    char byte = 0;
    beast::error_code ec;
    const std::size_t n = s.read_some(net::buffer(&byte, 1), ec);
    closed += (ec && ec != net::error::would_block) || n > 0 ? 1 : 0;
  }
  MESSAGE(closed << " of " << kHeld << " trickling connections closed or refused");
  CHECK(closed >= kHeld - 129);
  CHECK(server.running());
  server.signal(SIGTERM);
  REQUIRE(server.wait_exit(10s) == std::optional<int>(0));
  CHECK(summary_value(server.out(), "web_evicted") >= 1);
}
