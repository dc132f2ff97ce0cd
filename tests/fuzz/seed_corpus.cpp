// Writes seed corpora for the protocol fuzzers: real encodings of every message kind, so that
// mutations start from buffers that pass the verifier and reach the range checks.
// Usage: swarmfield_fuzz_seed_corpus <output-dir>   (creates tcp/ frames/ datagrams/ snapshots/ deltas/ fragments/)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "swarmfield/protocol/datagram.hpp"
#include "swarmfield/protocol/framing.hpp"
#include "swarmfield/protocol/map_transfer.hpp"
#include "swarmfield/protocol/snapshot_fragments.hpp"
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

  // Datagram fuzzer, even mode: [u16 length][datagram]... (a 3-fragment snapshot + an input).
  std::vector<std::uint8_t> datagrams{0};
  const auto fragments = sp::encode_snapshot_datagrams({7, 1, 0}, sp::test::make_snapshot(300, sp::test::Layout::kSpread, 1, 5));
  auto append = [&](const std::vector<std::uint8_t>& d) {
    datagrams.push_back(static_cast<std::uint8_t>(d.size()));
    datagrams.push_back(static_cast<std::uint8_t>(d.size() >> 8));
    datagrams.insert(datagrams.end(), d.begin(), d.end());
  };
  for (const auto& d : fragments) append(d);
  append(sp::encode_input_datagram({7, 2, 1}, sp::Input{1, 0.5f, -0.5f, 0, 0, 100, 100, 5, 6}));
  write(out / "datagrams", "snapshot_and_input", datagrams);
  // Odd mode: a small snapshot split by hand into 2 fragments, plus a duplicate.
  const auto payload = sp::compress_snapshot(sp::test::make_snapshot(3, sp::test::Layout::kPacked, 2, 9));
  std::vector<std::uint8_t> manual{1};
  const std::size_t half = payload.size() / 2;
  for (int rep = 0; rep < 2; ++rep) {
    for (std::size_t part = 0; part < 2; ++part) {
      const std::size_t begin = part * half;
      const std::size_t end = part == 0 ? half : payload.size();
      manual.insert(manual.end(), {9, static_cast<std::uint8_t>(part), 2, static_cast<std::uint8_t>(end - begin)});
      manual.insert(manual.end(), payload.begin() + static_cast<std::ptrdiff_t>(begin),
                    payload.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  write(out / "datagrams", "manual_fragments", manual);

  write(out / "snapshots", "empty", sp::compress_snapshot(sp::Snapshot{}));
  write(out / "snapshots", "small", sp::compress_snapshot(sp::test::make_snapshot(20, sp::test::Layout::kSpread, 3)));
  write(out / "snapshots", "packed", sp::compress_snapshot(sp::test::make_snapshot(200, sp::test::Layout::kPacked, 4)));

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
