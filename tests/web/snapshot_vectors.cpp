// Test vectors for the browser's snapshot decoder (web/src/snapshot): runs the real encoder the
// way the server does (SnapshotSender, reliable as over TCP and the WebSocket, and unreliable with
// acks as over UDP) over a few hundred synthetic agents for ~60 snapshots, decodes every payload
// with the real client side (SnapshotReceiver, client::unpack_frame), and writes what the C++
// holds after each one as JSON. Also hostile variants of some payloads with the C++ decoder's
// verdict. web/test/snapshot_vectors.test.mjs replays them and requires the same frames, bit for
// bit, and the same failures.
//
// Also a whole session as the server sends it over TCP (and the WebSocket): Welcome, the map's
// zstd chunks (out of order, one twice), MapDeltas (one early, one stale), the reliable stream's
// snapshots, a Bye; with the map the client must end up with. And, as
// `snapshot_vectors --check-client HEX...`, the C++ decoder's verdict on messages a client
// encoded (the page's Hello and Inputs), one JSON line each.
//
// Usage: snapshot_vectors OUT.json [SEED]. The scenario covers what the codec distinguishes:
// agents added, removed, killed (death flags), kinds changed, stale ones (not sent for many
// snapshots: the velocity span clamp at 64 ticks and the prediction clamp at 16), jumps and
// heading turns (escapes), agents at the edges of the position range (prediction clamped), a
// density grid that pans and changes cell size, snapshots without prediction, tick gaps, lost,
// reordered and duplicated snapshots (baselines further back, stale and no-baseline results), a
// server history too small for a frame (full snapshots in the middle of a stream), players with
// extreme values, every precision shift (coarse positions and headings).
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "swarmfield/client/snapshot_state.hpp"
#include "swarmfield/protocol/snapshot/agent_frame.hpp"
#include "swarmfield/protocol/snapshot/density_grid.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
#include "swarmfield/protocol/transport/map_transfer.hpp"
#include "swarmfield/protocol/transport/messages.hpp"

namespace sp = swarmfield::protocol;
namespace sc = swarmfield::client;
using json = nlohmann::ordered_json;

namespace {

constexpr std::uint32_t kWorldUnits = 512 * sp::kPositionUnitsPerCell;  // a 512-cell map
constexpr float kCellSize = 0.75f;  // world units per cell: not 1, so dequantization is exercised
constexpr std::size_t kSnapshots = 60;
constexpr std::size_t kMaxTracked = 200;  // the rest of the view goes to the density grid

/// One synthetic agent: position in 1/64 cell, velocity in position units per tick.
struct Agent {
  std::uint32_t id = 0;
  std::int64_t x = 0, y = 0;
  std::int32_t vx = 0, vy = 0;
  std::uint8_t heading = 0;
  std::uint8_t kind = 0;
  bool pinned = false;  ///< always a candidate (edge-of-range agents), view or not
};

/// A view rectangle in position units, as the server's relevance would cut it.
struct View {
  std::int64_t x0, y0, x1, y1;
  [[nodiscard]] bool contains(const Agent& a) const noexcept { return a.x >= x0 && a.x < x1 && a.y >= y0 && a.y < y1; }
};

/// A crowd whose motion, churn and events are drawn from one seeded generator.
class Crowd {
 public:
  explicit Crowd(std::uint64_t seed) : rng_(seed) {
    for (int i = 0; i < 900; ++i) spawn();
    // Edge-of-range agents: predictions clamp at 0 and at kPositionMax.
    add_pinned(0, 40, -5, -3);
    add_pinned(sp::kPositionMax - 3, sp::kPositionMax - 1, 7, 6);
    add_pinned(5, sp::kPositionMax, -40, 40);
  }

  /// Moves every agent by `ticks` ticks of its velocity plus jitter, bouncing off the map's
  /// sides; turns some; the pinned ones clamp at the range.
  void step(std::uint32_t ticks) {
    std::uniform_int_distribution<std::int32_t> jitter(-2, 2);
    for (Agent& a : agents_) {
      const std::int64_t hi = a.pinned ? sp::kPositionMax : kWorldUnits - 1;
      for (std::uint32_t t = 0; t < ticks; ++t) {
        a.x += a.vx + jitter(rng_);
        a.y += a.vy + jitter(rng_);
        if (!a.pinned && (a.x < 0 || a.x > hi)) a.vx = -a.vx;
        if (!a.pinned && (a.y < 0 || a.y > hi)) a.vy = -a.vy;
        a.x = std::clamp<std::int64_t>(a.x, 0, hi);
        a.y = std::clamp<std::int64_t>(a.y, 0, hi);
      }
      if (rng_() % 6 == 0) a.heading = static_cast<std::uint8_t>(a.heading + static_cast<int>(rng_() % 9) - 4);
    }
  }

  /// Removes `n` random agents, most of them inside `near` (so the client holds them), ids into
  /// `killed` for those the rules "killed"; spawns `n`.
  template <typename Near>
  void churn(std::size_t n, std::vector<std::uint32_t>& killed, Near near) {
    for (std::size_t c = 0; c < n; ++c) {
      std::size_t i = rng_() % agents_.size();
      for (int tries = 0; tries < 20 && !near(agents_[i]); ++tries) i = rng_() % agents_.size();
      if (agents_[i].pinned) continue;
      if (rng_() % 2 == 0) killed.push_back(agents_[i].id);
      agents_.erase(agents_.begin() + static_cast<std::ptrdiff_t>(i));
      spawn();
    }
  }

  /// Events that need escapes and kind changes: jumps, big turns, new kinds.
  void events() {
    for (int e = 0; e < 6; ++e) {
      Agent& a = agents_[rng_() % agents_.size()];
      switch (rng_() % 3) {
        case 0:  // a jump (teleport): position escape
          if (!a.pinned) {
            a.x = static_cast<std::int64_t>(rng_() % kWorldUnits);
            a.y = static_cast<std::int64_t>(rng_() % kWorldUnits);
          }
          break;
        case 1:  // a sharp turn: heading escape
          a.heading = static_cast<std::uint8_t>(a.heading + 64 + rng_() % 128);
          break;
        default:
          a.kind = static_cast<std::uint8_t>(rng_() % 4);
          break;
      }
    }
    // Now and then a sprinter: a velocity change too big for the predictor (speed class 2).
    Agent& s = agents_[rng_() % agents_.size()];
    if (!s.pinned) {
      s.vx = static_cast<std::int32_t>(rng_() % 41) - 20;
      s.vy = static_cast<std::int32_t>(rng_() % 41) - 20;
    }
  }

  [[nodiscard]] const std::vector<Agent>& agents() const noexcept { return agents_; }
  std::mt19937_64& rng() noexcept { return rng_; }

 private:
  void spawn() {
    Agent a;
    next_id_ += 1 + static_cast<std::uint32_t>(rng_() % 4);
    a.id = next_id_;
    a.x = static_cast<std::int64_t>(rng_() % kWorldUnits);
    a.y = static_cast<std::int64_t>(rng_() % kWorldUnits);
    a.vx = static_cast<std::int32_t>(rng_() % 11) - 5;
    a.vy = static_cast<std::int32_t>(rng_() % 11) - 5;
    a.heading = static_cast<std::uint8_t>(rng_());
    a.kind = static_cast<std::uint8_t>(rng_() % 3);
    // Ids increase in spawn order; the pinned ones (added last, ids near 2^32) stay last.
    const auto at = std::find_if(agents_.begin(), agents_.end(), [](const Agent& b) { return b.pinned; });
    agents_.insert(at, a);
  }
  void add_pinned(std::int64_t x, std::int64_t y, std::int32_t vx, std::int32_t vy) {
    Agent a;
    a.id = pinned_id_++;
    a.x = x;
    a.y = y;
    a.vx = vx;
    a.vy = vy;
    a.heading = 250;
    a.kind = 1;
    a.pinned = true;
    agents_.push_back(a);
  }

  std::mt19937_64 rng_;
  std::uint32_t next_id_ = 10;
  std::uint32_t pinned_id_ = 0xFFFFFFFFu - 2;  // the top of the id range
  std::vector<Agent> agents_;
};


/// What one stream's sender is told to do with a snapshot.
struct StepPlan {
  View view;
  std::uint32_t ticks;       ///< ticks since the last snapshot
  unsigned send_percent;     ///< budget: share of candidates sent
  bool predict;              ///< prediction flag
};

/// The candidates (the kMaxTracked agents of the view nearest its centre, plus the pinned
/// ones) and the density grid of the rest of the view, as the server's selector makes them.
/// Some agents are starved by the budget for long stretches (stale far past 64 ticks).
void select(const Crowd& crowd, const StepPlan& plan, std::size_t step, std::mt19937_64& rng,
            sp::AgentCandidates& candidates, sp::DensityGrid& grid) {
  const View& v = plan.view;
  const double cx = static_cast<double>(v.x0 + v.x1) / 2.0, cy = static_cast<double>(v.y0 + v.y1) / 2.0;
  std::vector<std::pair<double, std::size_t>> inside;
  const auto& agents = crowd.agents();
  for (std::size_t i = 0; i < agents.size(); ++i) {
    if (agents[i].pinned || !v.contains(agents[i])) continue;
    const double dx = static_cast<double>(agents[i].x) - cx, dy = static_cast<double>(agents[i].y) - cy;
    inside.emplace_back(dx * dx + dy * dy, i);
  }
  std::sort(inside.begin(), inside.end());
  std::vector<std::size_t> tracked;
  const auto cell = [](std::int64_t q) { return static_cast<std::int32_t>(q / sp::kPositionUnitsPerCell); };
  sp::set_density_grid_geometry(grid, cell(v.x0), cell(v.y0), cell(v.x1 - 1) + 1, cell(v.y1 - 1) + 1);
  std::vector<std::uint32_t> counts(grid.levels.size(), 0);
  for (std::size_t k = 0; k < inside.size(); ++k) {
    const Agent& a = agents[inside[k].second];
    if (k < kMaxTracked) {
      tracked.push_back(inside[k].second);
    } else {
      sp::count_density_agent(grid, counts, cell(a.x), cell(a.y));
    }
  }
  for (std::size_t i = 0; i < counts.size(); ++i) grid.levels[i] = sp::density_level(counts[i]);
  if (inside.size() <= kMaxTracked) grid.clear();  // nothing untracked: no grid, as the server
  for (std::size_t i = 0; i < agents.size(); ++i) {
    if (agents[i].pinned) tracked.push_back(i);
  }
  std::sort(tracked.begin(), tracked.end());  // agents_ is in id order
  candidates.clear();
  for (const std::size_t i : tracked) {
    const Agent& a = agents[i];
    const bool starved = a.id % 11 == 0 && step % 25 != 0;  // sent once in 25 snapshots
    const bool send = !starved && rng() % 100 < plan.send_percent;
    candidates.push_back(sp::AgentCandidate{a.id, static_cast<std::uint32_t>(a.x), static_cast<std::uint32_t>(a.y),
                                            a.heading, a.kind, static_cast<std::uint8_t>(send ? 1 : 0)});
  }
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

/// A float as the exact double it holds (JSON numbers are doubles: no rounding either way).
double exact(float f) { return static_cast<double>(f); }

json agent_json(const sp::AgentState& a) {
  return json::array({a.id, a.x, a.y, a.tick, a.vx, a.vy, a.heading, a.kind});
}

json grid_json(const sp::DensityGrid& g) {
  return json{{"origin_x", g.origin_x}, {"origin_y", g.origin_y}, {"cell_log2", g.cell_log2},
              {"width", g.width},       {"height", g.height},     {"levels", g.levels}};
}

json frame_json(const sp::AgentFrame& f) {
  json agents = json::array();
  for (const sp::AgentState& a : f.agents) agents.push_back(agent_json(a));
  return json{{"sequence", f.sequence}, {"tick", f.tick}, {"agents", agents}, {"grid", grid_json(f.grid)}};
}

/// 64-bit values as decimal strings (JSON numbers lose precision above 2^53).
json header_json(const sp::SnapshotHeader& h) {
  json players = json::array();
  for (const sp::PlayerState& p : h.players) {
    players.push_back(json{{"id", p.id},
                           {"x", exact(p.x)},
                           {"y", exact(p.y)},
                           {"contacts", p.contacts},
                           {"health", exact(p.health)},
                           {"kills", p.kills},
                           {"shots", p.shots},
                           {"score", std::to_string(p.score)},
                           {"aim", p.aim}});
  }
  return json{{"sequence", h.sequence},
              {"tick", h.tick},
              {"baseline_distance", h.baseline_distance},
              {"predicted", h.predicted},
              {"precision_shift", h.precision_shift},
              {"echo_client_time_us", std::to_string(h.echo_client_time_us)},
              {"total_agents", h.total_agents},
              {"rebuilds", std::to_string(h.rebuilds)},
              {"wave", h.wave},
              {"players", players}};
}

/// What the client draws (client::unpack_frame): ids, the quantized positions drawn (predicted
/// for agents not updated; recovered from the floats), world floats, updated count, deaths.
json render_json(const sc::SnapshotState& s) {
  json agents = json::array();
  for (const sc::RenderAgent& a : s.agents) {
    agents.push_back(json::array({a.id, exact(a.x), exact(a.y), exact(a.heading), a.kind}));
  }
  json deaths = json::array();
  for (const sc::RenderAgent& a : s.deaths) deaths.push_back(json::array({a.id, exact(a.x), exact(a.y), a.kind}));
  return json{{"updated", s.updated}, {"agents", agents}, {"deaths", deaths}};
}

const char* result_name(sp::SnapshotReceiver::Result r) {
  switch (r) {
    case sp::SnapshotReceiver::Result::kDecoded: return "decoded";
    case sp::SnapshotReceiver::Result::kStale: return "stale";
    case sp::SnapshotReceiver::Result::kNoBaseline: return "no_baseline";
    case sp::SnapshotReceiver::Result::kMalformed: return "malformed";
  }
  return "?";
}

/// Players with values at the edges of what the wire carries.
std::vector<sp::PlayerState> players_at(std::size_t step) {
  const auto s = static_cast<float>(step);
  std::vector<sp::PlayerState> players;
  players.push_back(sp::PlayerState{7, 100.25f + s * 0.7f, 80.5f - s * 0.3f, static_cast<std::uint32_t>(step % 5),
                                    step % 17 == 16 ? 0.0f : 100.0f - s, static_cast<std::uint32_t>(step * 3),
                                    static_cast<std::uint32_t>(step * 7), -static_cast<std::int64_t>(step) * 1234567890123LL,
                                    static_cast<std::uint8_t>(step * 9)});
  if (step > 10) {
    players.push_back(sp::PlayerState{0xFFFFFFF0u, -3.5e6f, 1e-30f, 0xFFFFFFFFu, 1e30f, 0, 0xFFFFFFFFu,
                                      std::numeric_limits<std::int64_t>::max(), 255});
  }
  return players;
}

/// One stream of snapshots from a sender to a receiver; `deliver` decides which payloads arrive
/// and in which order (indices into the payloads sent so far), `ack_delay` how many steps the
/// receiver's acks take back to an unreliable sender.
struct StreamSpec {
  std::string name;
  bool reliable = true;
  std::size_t server_history_agents = 4 * 16384;  // the server's (snapshot_builder.hpp)
  std::uint64_t seed = 1;
};

json run_stream(const StreamSpec& spec, json* corrupt_out) {
  Crowd crowd(spec.seed);
  std::mt19937_64& rng = crowd.rng();
  sp::SnapshotSender sender(spec.server_history_agents, spec.reliable, sp::HistoryPool::kFixed);
  sp::SnapshotReceiver receiver(16 * 16384);  // the client library's (client::Connection)
  std::vector<std::uint32_t> killed;          // recent deaths, sorted
  std::vector<std::vector<std::uint8_t>> sent;
  std::vector<sp::AgentFrame> sender_frames;  // what the client holds after each sent snapshot
  std::vector<sp::SnapshotAck> pending_acks;  // unreliable: acks on their way back
  json steps = json::array();
  std::uint32_t tick = 100;
  std::uint64_t echo = (std::uint64_t{1} << 60) + 12345;  // above 2^53: JS must keep 64 bits
  View view{64 * 40, 64 * 30, 64 * 300, 64 * 260};
  for (std::size_t step = 0; step < kSnapshots; ++step) {
    StepPlan plan{view, 3, 70, true};
    if (step == 12) plan.ticks = 1;
    if (step == 20) plan.ticks = 40;   // a gap: prediction clamps at 16, velocity spans stay < 64
    if (step == 33) plan.ticks = 200;  // a long stall: every velocity span clamps at 64
    if (step >= 24 && step < 28) plan.predict = false;
    if (step == 5 || step == 40) plan.send_percent = 100;
    if (step >= 45 && step < 50) plan.send_percent = 15;
    // The view pans, grows (the density grid's cell size changes) and shrinks.
    if (step < 20) {
      view.x0 += 64 * 3;
      view.x1 += 64 * 3;
    } else if (step == 20) {
      view = View{0, 0, kWorldUnits, kWorldUnits};  // the whole map
    } else if (step == 38) {
      view = View{64 * 100, 64 * 100, 64 * 164, 64 * 164};
    } else if (step > 38) {
      view.y0 += 64;
      view.y1 += 64;
    }
    plan.view = view;
    tick += plan.ticks;
    crowd.step(plan.ticks);
    if (step % 3 == 1) crowd.events();
    if (step % 4 == 2) crowd.churn(6, killed, [&view](const Agent& a) { return view.contains(a); });
    std::sort(killed.begin(), killed.end());
    sp::AgentCandidates candidates;
    sp::DensityGrid grid;
    select(crowd, plan, step, rng, candidates, grid);
    sp::SnapshotHeader header;
    header.tick = tick;
    header.echo_client_time_us = echo + step * 1000;
    header.total_agents = static_cast<std::uint32_t>(crowd.agents().size() + 100000);
    header.rebuilds = (std::uint64_t{1} << 53) + 1 + step;
    header.wave = static_cast<std::uint32_t>(step / 10);
    header.players = players_at(step);
    // Every precision a view may ask for (view_precision_shift), changing within a stream.
    header.precision_shift = static_cast<std::uint8_t>((step / 6) % (sp::kMaxPrecisionShift + 1));
    sender.set_prediction(plan.predict);
    sender.set_recent_deaths(killed);
    std::vector<std::uint8_t> payload;
    if (!sender.encode(header, candidates, grid, payload)) {
      std::cerr << "encode failed at step " << step << "\n";
      std::exit(1);
    }
    sent.push_back(payload);
    sender_frames.push_back(sender.last_frame());

    // What reaches the client this step: over the reliable stream, every payload in order; over
    // the unreliable one, some lost, some late (after the next), some twice.
    std::vector<std::size_t> arrivals;
    if (spec.reliable) {
      arrivals.push_back(step);
    } else if (step % 7 == 3) {
      // lost
    } else if (step % 9 == 4) {
      // held back: arrives after the next one (stale then)
    } else {
      arrivals.push_back(step);
      if (step % 9 == 5) arrivals.push_back(step - 1);
      if (step % 11 == 0) arrivals.push_back(step);  // duplicate
    }
    for (const std::size_t index : arrivals) {
      const std::vector<std::uint8_t>& p = sent[index];
      const sp::SnapshotReceiver::Result result = receiver.receive(p);
      json entry{{"sent_step", index}, {"payload", hex(p)}, {"result", result_name(result)}};
      entry["ack"] = json{{"latest", receiver.ack().latest}, {"received", receiver.ack().received}};
      if (result == sp::SnapshotReceiver::Result::kDecoded) {
        if (!(receiver.frame() == sender_frames[index])) {
          std::cerr << spec.name << ": the receiver's frame differs from the sender's at step " << index << "\n";
          std::exit(1);
        }
        sc::SnapshotState state;
        sc::unpack_frame(receiver.header(), receiver.frame(), kCellSize, state, receiver.deaths());
        entry["header"] = header_json(receiver.header());
        entry["frame"] = frame_json(receiver.frame());
        json deaths = json::array();
        for (const sp::AgentState& a : receiver.deaths()) deaths.push_back(agent_json(a));
        entry["deaths"] = deaths;
        entry["render"] = render_json(state);
      }
      steps.push_back(entry);
    }
    if (!spec.reliable) {
      pending_acks.push_back(receiver.ack());
      if (pending_acks.size() > 2) {  // two snapshots' round trip
        sender.on_ack(pending_acks.front());
        pending_acks.erase(pending_acks.begin());
      }
    }
    // Deaths are remembered for a while, then forgotten (the server: 2 x 33 snapshot periods).
    if (step % 10 == 9) killed.clear();
  }

  if (corrupt_out != nullptr) {
    // Hostile variants of reliable payloads, decoded against the frame they name as baseline.
    sp::SnapshotDecoder decoder;
    std::mt19937_64 mutate(spec.seed * 7919);
    for (std::size_t index = 1; index < sent.size(); index += 4) {
      const std::vector<std::uint8_t>& original = sent[index];
      std::vector<std::vector<std::uint8_t>> variants;
      std::vector<std::string> kinds;
      auto add = [&](std::vector<std::uint8_t> v, const std::string& kind) {
        variants.push_back(std::move(v));
        kinds.push_back(kind);
      };
      add({original.begin(), original.end() - 1}, "truncated by one byte");
      add({original.begin(), original.begin() + static_cast<std::ptrdiff_t>(original.size() / 2)}, "truncated to half");
      auto extra = original;
      extra.push_back(0);
      add(extra, "one byte appended");
      auto format = original;
      format[0] = 0xD2;
      add(format, "older format byte");
      auto flags = original;
      flags[1] |= 0x04;
      add(flags, "unknown flag");
      auto distance = original;
      distance[10] = 33;
      add(distance, "baseline distance 33");
      for (int k = 0; k < 6; ++k) {
        auto flipped = original;
        const std::size_t at = 36 + mutate() % (flipped.size() - 36);  // past the header
        flipped[at] = static_cast<std::uint8_t>(flipped[at] ^ (1u << (mutate() % 8)));
        add(flipped, "bit flipped at byte " + std::to_string(at));
      }
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const sp::AgentFrameView baseline = sp::AgentFrameView::of(sender_frames[index - 1]);
        sp::SnapshotHeader header;
        sp::AgentFrame frame;
        std::string error;
        const bool ok = decoder.decode(variants[v], baseline, header, frame, &error);
        json c{{"baseline_step", index - 1}, {"what", kinds[v]}, {"payload", hex(variants[v])}, {"ok", ok}};
        if (ok) {
          c["header"] = header_json(header);
          c["frame"] = frame_json(frame);
        } else {
          c["error"] = error;
        }
        corrupt_out->push_back(c);
      }
    }
  }
  return json{{"name", spec.name}, {"reliable", spec.reliable}, {"steps", steps}};
}


std::string hex_of(const std::vector<std::uint8_t>& v) { return hex(std::span<const std::uint8_t>(v)); }

std::vector<std::uint8_t> unhex(const std::string& h) {
  std::vector<std::uint8_t> out;
  for (std::size_t k = 0; k + 1 < h.size(); k += 2) out.push_back(static_cast<std::uint8_t>(std::stoi(h.substr(k, 2), nullptr, 16)));
  return out;
}


/// A 400 x 300 map of noisy costs (barely compressible: three MapChunks) with walls round it.
std::vector<std::uint8_t> session_map(std::int32_t width, std::int32_t height, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> costs(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  for (std::int32_t y = 0; y < height; ++y) {
    for (std::int32_t x = 0; x < width; ++x) {
      const bool border = x == 0 || y == 0 || x == width - 1 || y == height - 1;
      const auto noise = static_cast<std::uint8_t>(1 + rng() % 254);
      costs[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)] =
          border || rng() % 10 == 0 ? std::uint8_t{255} : noise;
    }
  }
  return costs;
}

/// The server's side of a whole TCP session for a viewer, as envelopes (no length prefix: the
/// WebSocket's messages), and what the client holds at the end.
json session_json(const json& reliable_steps, std::uint64_t seed) {
  constexpr std::int32_t kWidth = 400, kHeight = 300;
  std::vector<std::uint8_t> costs = session_map(kWidth, kHeight, seed);
  sp::Welcome welcome;
  welcome.client_id = 5;
  welcome.tick_hz = 30;
  welcome.snapshot_hz = 10;
  welcome.udp_port = 0;
  welcome.udp.token.fill(7);
  welcome.map.width = kWidth;
  welcome.map.height = kHeight;
  welcome.map.cell_size = kCellSize;
  welcome.map.name = "vectors-400x300";
  const std::vector<sp::MapChunk> chunks = sp::make_map_chunks(costs, welcome.map);
  welcome.kinds = {sp::KindInfo{"runner", 0.3f, 0xff9a30}, sp::KindInfo{"walker", 0.35f, 0xe04040},
                   sp::KindInfo{"brute", 0.9f, 0x9040c0}};
  json messages = json::array();
  auto send = [&messages](const sp::TcpMessage& m) { messages.push_back(hex_of(sp::encode_tcp_message(m))); };
  send(welcome);
  // Chunks out of order, one twice; a map change before the map is complete (the client holds it).
  sp::MapDelta early{1, {sp::MapCellChange{10, 10, 255, 200}, sp::MapCellChange{11, 10, 255, 100}}};
  std::vector<std::size_t> order;
  for (std::size_t i = chunks.size(); i-- > 0;) order.push_back(i);
  for (std::size_t k = 0; k < order.size(); ++k) {
    send(chunks[order[k]]);
    if (k == 0) {
      send(early);
      send(chunks[order[k]]);
    }
  }
  // Snapshots, with a barricade destroyed and another built halfway, then a stale delta.
  sp::MapDelta later{2, {sp::MapCellChange{10, 10, 3, 0}, sp::MapCellChange{20, 30, 255, 255}}};
  sp::MapDelta stale{2, {sp::MapCellChange{5, 5, 255, 1}}};
  for (std::size_t i = 0; i < reliable_steps.size(); ++i) {
    send(sp::SnapshotData{unhex(reliable_steps[i]["payload"])});
    if (i == reliable_steps.size() / 2) {
      send(later);
      send(stale);
    }
  }
  send(sp::Bye{"server shutting down"});
  // The map the client ends with: the deltas of revisions 1 and 2 (the stale one ignored).
  for (const sp::MapDelta* d : {&early, &later}) {
    for (const sp::MapCellChange& c : d->cells) costs[static_cast<std::size_t>(c.y) * kWidth + c.x] = c.cost;
  }
  json kinds = json::array();
  for (const sp::KindInfo& k : welcome.kinds) kinds.push_back(json{{"name", k.name}, {"radius", exact(k.radius)}, {"colour", k.colour}});
  return json{{"messages", messages},
              {"chunks", chunks.size()},
              {"map", json{{"width", kWidth}, {"height", kHeight}, {"cell_size", exact(kCellSize)}, {"name", welcome.map.name}}},
              {"kinds", kinds},
              {"final_costs", hex_of(costs)},
              {"final_barricades", json::array({json::array({30 * kWidth + 20, 255}), json::array({10 * kWidth + 11, 100})})},
              {"snapshots", reliable_steps.size()},
              {"bye", "server shutting down"}};
}

/// The C++ verdict on client messages (hex envelopes): one JSON line each.
int check_client_messages(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    std::string error;
    const auto m = sp::decode_tcp_message(unhex(argv[i]), &error, sp::MessageSet::kFromClient);
    json out{{"ok", m.has_value()}};
    if (!m) {
      out["error"] = error;
    } else if (const auto* hello = std::get_if<sp::Hello>(&*m)) {
      out["type"] = "hello";
      out["protocol_version"] = hello->protocol_version;
      out["role"] = static_cast<int>(hello->role);
      out["name"] = hello->name;
      out["connect_token"] = hello->connect_token.size();
    } else if (const auto* in = std::get_if<sp::Input>(&*m)) {
      out["type"] = "input";
      out["sequence"] = in->sequence;
      out["move"] = json::array({exact(in->move_x), exact(in->move_y)});
      out["view"] = json::array({exact(in->view_x0), exact(in->view_y0), exact(in->view_x1), exact(in->view_y1)});
      out["ack"] = json::array({in->snapshot_ack.latest, in->snapshot_ack.received});
      out["client_time_us"] = std::to_string(in->client_time_us);
      out["fire"] = in->fire;
      out["build_id"] = in->build_id;
    } else if (const auto* bye = std::get_if<sp::Bye>(&*m)) {
      out["type"] = "bye";
      out["reason"] = bye->reason;
    }
    std::cout << out.dump() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--check-client") return check_client_messages(argc, argv);
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: snapshot_vectors OUT.json [SEED] | snapshot_vectors --check-client HEX...\n";
    return 2;
  }
  const std::uint64_t seed = argc == 3 ? std::stoull(argv[2]) : 20261203;
  json corrupt = json::array();
  json streams = json::array();
  streams.push_back(run_stream(StreamSpec{"reliable", true, 4 * 16384, seed}, &corrupt));
  streams.push_back(run_stream(StreamSpec{"unreliable", false, 4 * 16384, seed + 1}, nullptr));
  // A server history smaller than the larger frames (up to 203 agents): those are never baselines, so
  // the stream falls back to full snapshots in its middle.
  streams.push_back(run_stream(StreamSpec{"tight_history", true, 190, seed + 2}, nullptr));
  const json out{{"format", "swarmfield snapshot vectors 1"},
                 {"seed", seed},
                 {"cell_size", exact(kCellSize)},
                 {"streams", streams},
                 {"corrupt", corrupt},
                 {"session", session_json(streams[0]["steps"], seed)}};
  std::ofstream file(argv[1]);
  file << out.dump() << "\n";
  if (!file) {
    std::cerr << "cannot write " << argv[1] << "\n";
    return 1;
  }
  std::size_t decoded = 0, corrupt_failed = 0;
  for (const auto& s : streams) {
    for (const auto& step : s["steps"]) decoded += step["result"] == "decoded" ? 1 : 0;
  }
  for (const auto& c : corrupt) corrupt_failed += c["ok"] ? 0 : 1;
  std::cout << "snapshot_vectors: " << streams.size() << " streams, " << decoded << " snapshots decoded, "
            << corrupt.size() << " hostile payloads (" << corrupt_failed << " refused) -> " << argv[1] << "\n";
  return 0;
}
