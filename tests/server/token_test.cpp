// Connect tokens against the real swarmfield-server binary (--auth tokens, issue 21 item 1):
// only valid, unexpired, unused tokens naming this server join, every refusal is counted by its
// reason, the token decides role and name, and an on-path reader of the whole TCP stream
// neither sees the session keys nor gets an injected or replayed frame accepted.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "loopback_support.hpp"
#include "swarmfield/protocol/transport/connect_token.hpp"
#include "swarmfield/protocol/transport/resume.hpp"
#include "temp_dir.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using test::RawClient;
using test::ServerProcess;
using test::small_city;
using test::stop_and_summarize;
using test::summary_value;
using test::wait_listening;

namespace {

std::uint64_t unix_now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// A server with --auth tokens and the key it shares with the "backend" (this test).
struct TokenServer {
  TokenServer() : key(protocol::make_token_key()) {
    const auto path = dir / "key.hex";
    std::ofstream(path) << protocol::format_token_key(key) << "\n";
    server.emplace(small_city({"--auth", "tokens", "--key-file", path.string()}));
    const auto listening = wait_listening(*server);
    REQUIRE_MESSAGE(listening.has_value(), server->err());
    ports = *listening;
  }
  protocol::ConnectToken token(protocol::Role role, const std::string& name, std::uint64_t now, std::uint64_t valid_s,
                               std::uint16_t port = 0, std::uint64_t protocol_id = protocol::kConnectProtocolId,
                               const protocol::TokenKey* with = nullptr) const {
    protocol::TokenGrant grant;
    grant.client_id = 99;
    grant.role = role;
    grant.name = name;
    grant.server_addresses = {"127.0.0.1:" + std::to_string(port != 0 ? port : ports.tcp)};
    auto t = protocol::issue_connect_token(with ? *with : key, grant, now, valid_s, nullptr, protocol_id);
    REQUIRE(t);
    return *t;
  }

  test::TempDir dir{"swarmfield-token-test"};
  protocol::TokenKey key;
  std::optional<ServerProcess> server;
  test::Ports ports;
};

protocol::Hello hello_with(const std::optional<protocol::ConnectToken>& token, protocol::Role role) {
  protocol::Hello h = test::hello(role);
  if (token) h.connect_token = protocol::hello_token_bytes(*token);
  return h;
}

// Sends a Hello with `token`; the refusal's reason, or "" when the server answered otherwise.
std::string refusal_of(std::uint16_t port, const std::optional<protocol::ConnectToken>& token) {
  RawClient c;
  REQUIRE(c.connect(port));
  REQUIRE(c.send(hello_with(token, protocol::Role::kPlayer)));
  const auto error = c.read_until<protocol::Error>(5s);  // clear: the server does not trust the keys
  return error ? error->reason : std::string();
}

// Joins with `token`: the server's clear salt, then a stream sealed with the token's keys hashed
// with it; the Welcome (carrying those keys for UDP) and the whole map arrive. `keys` gets them.
std::optional<protocol::Welcome> join_sealed(RawClient& c, std::uint16_t port, const protocol::ConnectToken& token,
                                             protocol::Role hello_role, protocol::TokenSessionKeys* keys = nullptr) {
  REQUIRE(c.connect(port));
  REQUIRE(c.send(hello_with(token, hello_role)));
  const auto salt = c.read_until<protocol::SessionSalt>(5s);
  REQUIRE(salt.has_value());
  const protocol::TokenSessionKeys derived =
      protocol::derive_token_session_keys(token.client_to_server, token.server_to_client, salt->salt);
  if (keys != nullptr) *keys = derived;
  c.seal_stream(derived.client_to_server, derived.server_to_client);
  auto welcome = c.read_until<protocol::Welcome>(5s);
  if (!welcome) return std::nullopt;
  CHECK(welcome->udp.client_to_server == derived.client_to_server);
  CHECK(welcome->udp.server_to_client == derived.server_to_client);
  for (std::uint32_t i = 0; i < welcome->map.chunk_count; ++i) REQUIRE(c.read_until<protocol::MapChunk>(5s));
  return welcome;
}

bool contains(const std::vector<std::uint8_t>& haystack, std::span<const std::uint8_t> needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

}  // namespace

TEST_CASE("tokens: only valid, unexpired, unused tokens for this server join; refusals are counted by reason") {
  TokenServer s;
  const std::uint64_t now = unix_now();

  // A viewer's token: the Hello asks for a player slot, the token decides.
  const auto viewer = s.token(protocol::Role::kViewer, "spectator", now, 60);
  RawClient c;
  const auto welcome = join_sealed(c, s.ports.tcp, viewer, protocol::Role::kPlayer);
  REQUIRE_MESSAGE(welcome, s.server->err());
  CHECK(welcome->player_id == 0);
  CHECK(welcome->udp.client_to_server != viewer.client_to_server);  // salted: never the token's own
  const auto player = s.token(protocol::Role::kPlayer, "alice", now, 60);
  RawClient p;
  const auto joined = join_sealed(p, s.ports.tcp, player, protocol::Role::kViewer);
  REQUIRE(joined);
  CHECK(joined->player_id != 0);

  CHECK(refusal_of(s.ports.tcp, player).find("replayed") != std::string::npos);  // used once already
  CHECK(refusal_of(s.ports.tcp, std::nullopt).find("connect token") != std::string::npos);
  CHECK(refusal_of(s.ports.tcp, s.token(protocol::Role::kPlayer, "late", now - 120, 60)).find("expired") !=
        std::string::npos);
  const protocol::TokenKey other = protocol::make_token_key();
  CHECK(refusal_of(s.ports.tcp, s.token(protocol::Role::kPlayer, "mallory", now, 60, 0, protocol::kConnectProtocolId,
                                        &other))
            .find("forged") != std::string::npos);
  CHECK(refusal_of(s.ports.tcp, s.token(protocol::Role::kPlayer, "elsewhere", now, 60,
                                        static_cast<std::uint16_t>(s.ports.tcp + 1)))
            .find("wrong server") != std::string::npos);
  CHECK(refusal_of(s.ports.tcp, s.token(protocol::Role::kPlayer, "old-game", now, 60, 0, protocol::kConnectProtocolId ^ 1))
            .find("wrong protocol") != std::string::npos);
  // A Hello whose token bytes were changed in flight (the expiry moved) does not open.
  auto moved = s.token(protocol::Role::kPlayer, "moved", now, 60);
  moved.expire_unix_s += 3600;
  CHECK(refusal_of(s.ports.tcp, moved).find("forged") != std::string::npos);

  const std::string summary = stop_and_summarize(*s.server);
  CHECK(summary_value(summary, "tokens_accepted") == 2);
  CHECK(summary_value(summary, "tokens_replayed") == 1);
  CHECK(summary_value(summary, "tokens_missing") == 1);
  CHECK(summary_value(summary, "tokens_expired") == 1);
  CHECK(summary_value(summary, "tokens_forged") == 2);
  CHECK(summary_value(summary, "tokens_wrong_server") == 1);
  CHECK(summary_value(summary, "tokens_wrong_protocol") == 1);
}

TEST_CASE("tokens: an on-path reader of the whole TCP stream sees no key and can not inject or replay a frame") {
  TokenServer s;
  const std::uint64_t now = unix_now();
  const auto token = s.token(protocol::Role::kPlayer, "victim", now, 60);
  RawClient c;
  protocol::TokenSessionKeys keys;
  const auto welcome = join_sealed(c, s.ports.tcp, token, protocol::Role::kPlayer, &keys);
  REQUIRE(welcome);
  test::Inputs inputs;
  REQUIRE(c.send(inputs.make(1.0f, 0.0f, 16.0f, test::now_us())));
  REQUIRE(c.read_snapshot(5s));

  // What the reader saw: no key (the token's or the session's), and no frame after the salt
  // decodes as a message.
  for (const auto* bytes : {&c.sent_bytes(), &c.received_bytes()}) {
    for (const auto& key : {token.client_to_server, token.server_to_client, keys.client_to_server, keys.server_to_client}) {
      CHECK_FALSE(contains(*bytes, key));
    }
  }
  {
    protocol::FrameDecoder tap;
    tap.feed(c.received_bytes());
    std::vector<std::uint8_t> frame;
    int frames = 0;
    while (tap.next(frame) == protocol::FrameDecoder::Status::kFrame) {
      const auto clear = protocol::decode_tcp_message(frame);
      if (frames++ == 0) {
        CHECK((clear && std::holds_alternative<protocol::SessionSalt>(*clear)));  // the only clear frame
      } else {
        CHECK_FALSE(clear);
      }
    }
    CHECK(frames > 3);  // the salt, Welcome, the map, snapshots
  }

  // The reader replays the victim's sealed Input (it has the bytes, not the key): refused, and
  // the stream is closed.
  std::vector<std::uint8_t> sealed_input;
  {
  
    std::vector<std::uint8_t> hello_frame;
    REQUIRE(protocol::append_frame(protocol::encode_tcp_message(hello_with(token, protocol::Role::kPlayer)), hello_frame));
    // The captured stream: the clear Hello, then the sealed Input just sent.
    const auto& sent = c.sent_bytes();
    REQUIRE(sent.size() > hello_frame.size());
    sealed_input.assign(sent.begin() + static_cast<std::ptrdiff_t>(hello_frame.size()), sent.end());
  }
  REQUIRE(c.send_raw(sealed_input));
  CHECK(c.wait_closed(5s));

  // A second victim: the reader injects a clear Input (a player steered without the key).
  const auto token2 = s.token(protocol::Role::kPlayer, "victim-2", now, 60);
  RawClient c2;
  REQUIRE(join_sealed(c2, s.ports.tcp, token2, protocol::Role::kPlayer));
  std::vector<std::uint8_t> injected;
  REQUIRE(protocol::append_frame(protocol::encode_tcp_message(inputs.make(0.0f, 1.0f, 16.0f, test::now_us())), injected));
  REQUIRE(c2.send_raw(injected));
  CHECK(c2.wait_closed(5s));

  const std::string summary = stop_and_summarize(*s.server);
  CHECK(summary_value(summary, "unsealed_frames") == 2);
  CHECK(summary_value(summary, "tokens_accepted") == 2);
  CHECK(summary_value(summary, "tcp_inputs") == 1);  // only the victim's own sealed Input counted
}

TEST_CASE("tokens: a token's Hello replayed to another server with the same key gets other session keys") {
  // Two servers share a key (a fleet) and the port a token names (different hosts, same
  // port, or one server after a restart): the second takes the replayed Hello, since its
  // used-token set never saw it, but it seals with keys salted afresh, so no key and nonce pair
  // of the first session is ever used again.
  TokenServer a;
  const auto token = a.token(protocol::Role::kPlayer, "twice", unix_now(), 60);
  RawClient first;
  protocol::TokenSessionKeys keys_a;
  REQUIRE(join_sealed(first, a.ports.tcp, token, protocol::Role::kPlayer, &keys_a));
  a.server->signal(SIGTERM);
  REQUIRE(a.server->wait_exit(10s) == std::optional<int>(0));
  // The same key and the same port again (the restarted server).
  ServerProcess b({"--port", std::to_string(a.ports.tcp), "--bind", "127.0.0.1", "--city-size", "64", "--auth", "tokens",
                   "--key-file", (a.dir / "key.hex").string()});
  REQUIRE_MESSAGE(wait_listening(b).has_value(), b.err());
  RawClient replayed;
  protocol::TokenSessionKeys keys_b;
  REQUIRE(join_sealed(replayed, a.ports.tcp, token, protocol::Role::kPlayer, &keys_b));
  CHECK(keys_b.client_to_server != keys_a.client_to_server);
  CHECK(keys_b.server_to_client != keys_a.server_to_client);
  CHECK(summary_value(stop_and_summarize(b), "tokens_accepted") == 1);
}

TEST_CASE("tokens: an --auth open server refuses a Hello with a token, and --auth tokens needs a key file") {
  ServerProcess open_server(small_city());
  const auto listening = wait_listening(open_server);
  REQUIRE(listening);
  protocol::TokenGrant grant;
  grant.server_addresses = {"127.0.0.1:" + std::to_string(listening->tcp)};
  const auto token = protocol::issue_connect_token(protocol::make_token_key(), grant, unix_now(), 60);
  REQUIRE(token);
  CHECK(refusal_of(listening->tcp, *token).find("--auth open") != std::string::npos);
  CHECK(summary_value(stop_and_summarize(open_server), "tokens_missing") == 1);

  (void)test::expect_exit(small_city({"--auth", "tokens"}), 2, {"--key-file"});

  test::TempDir dir{"swarmfield-token-test"};
  std::ofstream(dir / "bad.hex") << "not a key\n";
  (void)test::expect_exit(small_city({"--auth", "tokens", "--key-file", (dir / "bad.hex").string()}), 2,
                          {"64 hex digits"});
}

TEST_CASE("tokens: without --public-address a token for another host on this port joins, and the log warns; with it, only its own") {
  // Servers sharing a key on the same port (a fleet; under Agones, GameServers on two nodes given
  // the same host port) took each other's tokens, each once, without a word: a token for
  // 127.0.0.1:P joined the server at 127.0.0.2:P and then the one it was for.
  TokenServer s;
  REQUIRE(s.server->wait_for_log("--public-address is not set", 5s).has_value());
  const std::uint64_t now = unix_now();
  protocol::TokenGrant grant;
  grant.role = protocol::Role::kPlayer;
  grant.name = "roamer";
  grant.server_addresses = {"127.0.0.2:" + std::to_string(s.ports.tcp)};  // another host, this port
  const auto roamer = protocol::issue_connect_token(s.key, grant, now, 60);
  REQUIRE(roamer);
  RawClient c;
  CHECK(join_sealed(c, s.ports.tcp, *roamer, protocol::Role::kPlayer).has_value());

  // Pinned: the token must name the address given, whatever port the server listens on.
  test::TempDir dir{"swarmfield-token-test"};
  std::ofstream(dir / "key.hex") << protocol::format_token_key(s.key) << "\n";
  ServerProcess pinned(small_city({"--auth", "tokens", "--key-file", (dir / "key.hex").string(), "--public-address",
                                   "game.example:7777"}));
  const auto listening = wait_listening(pinned);
  REQUIRE_MESSAGE(listening.has_value(), pinned.err());
  CHECK(pinned.err().find("--public-address is not set") == std::string::npos);
  grant.server_addresses = {"127.0.0.1:" + std::to_string(listening->tcp)};
  const auto by_port = protocol::issue_connect_token(s.key, grant, now, 60);
  REQUIRE(by_port);
  CHECK(refusal_of(listening->tcp, *by_port).find("wrong server") != std::string::npos);
  grant.server_addresses = {"game.example:7777"};
  const auto named = protocol::issue_connect_token(s.key, grant, now, 60);
  REQUIRE(named);
  RawClient d;
  CHECK(join_sealed(d, listening->tcp, *named, protocol::Role::kPlayer).has_value());
}

TEST_CASE("tokens: a resumed token session is sealed with keys derived from its secret, none of which travels") {
  TokenServer s;
  const auto token = s.token(protocol::Role::kPlayer, "roamer", unix_now(), 60);
  RawClient first;
  const auto welcome = join_sealed(first, s.ports.tcp, token, protocol::Role::kPlayer);
  REQUIRE(welcome);
  REQUIRE(welcome->resume.size() == protocol::kResumeSecretBytes);
  first.close_tcp();

  protocol::ResumeSecret secret{};
  std::copy(welcome->resume.begin(), welcome->resume.end(), secret.begin());
  const protocol::ResumedKeys keys = protocol::derive_resumed_keys(secret);
  RawClient again;
  REQUIRE(again.connect(s.ports.tcp));
  protocol::Hello hello = test::hello(protocol::Role::kViewer);
  const protocol::ResumeProof proof = protocol::resume_proof(secret);
  hello.resume.assign(proof.begin(), proof.end());
  REQUIRE(again.send(hello));
  again.seal_stream(keys.client_to_server, keys.server_to_client);
  const auto resumed = again.read_until<protocol::Welcome>(5s);
  REQUIRE_MESSAGE(resumed.has_value(), s.server->err());
  CHECK(resumed->player_id == welcome->player_id);
  CHECK(resumed->udp.client_to_server == keys.client_to_server);
  for (const auto* bytes : {&first.received_bytes(), &again.received_bytes(), &again.sent_bytes()}) {
    CHECK_FALSE(contains(*bytes, keys.client_to_server));
    CHECK_FALSE(contains(*bytes, keys.server_to_client));
    CHECK_FALSE(contains(*bytes, welcome->resume));
  }
  const std::string summary = stop_and_summarize(*s.server);
  CHECK(summary_value(summary, "resumes") == 1);
}
