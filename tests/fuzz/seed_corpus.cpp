// Writes seed corpora for the protocol fuzzers: real encodings of every message kind, so that
// mutations start from buffers that pass the verifier and reach the range checks.
// Usage: swarmfield_fuzz_seed_corpus <output-dir>
//   (creates tcp/ frames/ datagrams/ zstd/ deltas/ fragments/ packets/ tokens/; the map, config
//   and bot-script fuzzers take their seeds from files in the source tree, see CMakeLists.txt)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "swarmfield/protocol/transport/connect_token.hpp"
#include "swarmfield/protocol/transport/compression.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/map_transfer.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "fuzz_session.hpp"
#include "snapshot_fuzz_baseline.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& dir, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                    static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output-dir>\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  const auto messages = sp::test::sample_messages();
  std::vector<std::uint8_t> stream{0x40, 0x10};  // frame fuzzer: limit byte, piece seed
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto bytes = sp::encode_tcp_message(messages[i]);
    write(out / "tcp", "message_" + std::to_string(i), bytes);
    if (bytes.size() < 900 && !sp::append_frame(bytes, stream)) return 1;
  }
  write(out / "frames", "stream", stream);

  // Datagram fuzzer: [u16 length][datagram]... (inputs and acks).
  std::vector<std::uint8_t> datagrams;
  auto append = [&](const std::vector<std::uint8_t>& d) {
    datagrams.push_back(static_cast<std::uint8_t>(d.size()));
    datagrams.push_back(static_cast<std::uint8_t>(d.size() >> 8));
    datagrams.insert(datagrams.end(), d.begin(), d.end());
  };
  append(sp::encode_input_datagram(sp::Input{1, 0.5f, -0.5f, 0, 0, 100, 100, sp::SnapshotAck{5, 0xFu}, 6}));
  append(sp::encode_input_datagram(sp::Input{2, 0, 0, 0, 0, 100, 100, sp::SnapshotAck{6, 0x1Fu}, 7, true, -4.0f, 3.0f}));
  append(sp::encode_input_datagram(sp::Input{3, 0, 0, 0, 0, 100, 100, sp::SnapshotAck{7, 0x3Fu}, 8, false, 0, 0, 5, 40, 41}));
  append(sp::encode_ack_datagram(sp::SnapshotAck{40, 0x80000001u}));
  write(out / "datagrams", "input_and_ack", datagrams);

  // Packet fuzzer (packet_fuzz.cpp): raw mode, sealed datagrams of the fuzzer's fixed session;
  // sealed mode, [type][u32 sequence step][u16 body length][body] records.
  {
    const sp::SessionCredentials session = sp::fuzz_session();
    sp::PacketChannel client(sp::PacketChannel::Side::kClient, session);
    std::vector<std::uint8_t> raw{0};
    auto append_raw = [&](const std::vector<std::uint8_t>& d) {
      raw.push_back(static_cast<std::uint8_t>(d.size()));
      raw.push_back(static_cast<std::uint8_t>(d.size() >> 8));
      raw.insert(raw.end(), d.begin(), d.end());
    };
    append_raw(client.seal(sp::PacketType::kConnectRequest, {}));
    append_raw(client.seal(sp::PacketType::kChallengeResponse, sp::Challenge{}));
    append_raw(client.seal(sp::PacketType::kData, sp::encode_input_datagram(sp::Input{2, 1, 0, 0, 0, 9, 9, sp::SnapshotAck{1, 0}, 1})));
    append_raw(client.seal(sp::PacketType::kData, {}));
    write(out / "packets", "raw_handshake", raw);
    std::vector<std::uint8_t> sealed{1};
    const auto body = sp::encode_input_datagram(sp::Input{3, 0, 1, 0, 0, 5, 5, sp::SnapshotAck{}, 0});
    for (const std::uint8_t step : {1, 1, 0, 3, 2, 200}) {
      sealed.insert(sealed.end(), {4, step, 0, 0, 0, static_cast<std::uint8_t>(body.size()), 0});
      sealed.insert(sealed.end(), body.begin(), body.end());
    }
    write(out / "packets", "sealed_inputs", sealed);
  }

  // Connect-token fuzzer (connect_token_fuzz.cpp): tokens in their text form, sealed with the
  // fuzzer's fixed key, valid until far in the future (it opens them at t = 1e6 s).
  {
    sp::TokenGrant grant;
    grant.client_id = 7;
    grant.role = sp::Role::kPlayer;
    grant.name = "fuzz";
    grant.server_addresses = {"127.0.0.1:7777", "[::1]:7777"};
    const auto player = sp::issue_connect_token(sp::fuzz_token_key(), grant, 999'000, 100'000);
    grant.role = sp::Role::kViewer;
    grant.server_addresses = {"a:1"};
    const auto viewer = sp::issue_connect_token(sp::fuzz_token_key(), grant, 999'000, 100'000);
    if (player && viewer) {
      const std::string p = sp::encode_connect_token(*player);
      const std::string v = sp::encode_connect_token(*viewer);
      write(out / "tokens", "player", std::vector<std::uint8_t>(p.begin(), p.end()));
      write(out / "tokens", "viewer", std::vector<std::uint8_t>(v.begin(), v.end()));
      write(out / "tokens", "hello_bytes", sp::hello_token_bytes(*player));
    }
  }

  // zstd fuzzer: frames like the map transfer's.
  std::vector<std::uint8_t> costs(4096, 1);
  for (std::size_t i = 0; i < costs.size(); i += 7) costs[i] = 255;
  write(out / "zstd", "map_costs", sp::zstd_compress(costs));
  write(out / "zstd", "empty", sp::zstd_compress({}));

  const auto deltas = sp::test::fuzz_seed_payloads();
  for (std::size_t i = 0; i < deltas.size(); ++i) write(out / "deltas", "delta_" + std::to_string(i), deltas[i]);
  // Fragment fuzzer: both payloads as fragments, [u16 length][fragment]..., one duplicated.
  std::vector<std::uint8_t> fragments_stream;
  std::vector<std::vector<std::uint8_t>> pieces;
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    const std::size_t count = sp::split_snapshot(deltas[i], static_cast<std::uint32_t>(i + 1), pieces);
    for (std::size_t k = 0; k < count + (i == 0 ? 1 : 0); ++k) {
      const auto& f = pieces[k % count];
      fragments_stream.push_back(static_cast<std::uint8_t>(f.size()));
      fragments_stream.push_back(static_cast<std::uint8_t>(f.size() >> 8));
      fragments_stream.insert(fragments_stream.end(), f.begin(), f.end());
    }
  }
  write(out / "fragments", "two_snapshots", fragments_stream);
  return 0;
}
