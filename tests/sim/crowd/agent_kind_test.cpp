// Enemy kinds (server/sim/src/crowd/agent_kind.cpp): the default set, the strict check of a
// kind table, and the spawner's weighted, deterministic choice.
#include "swarmfield/sim/crowd/agent_kind.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "swarm_test_support.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::test;

TEST_CASE("the default kinds are runner, walker and brute, and pass the check") {
  const std::vector<AgentKind> kinds = default_agent_kinds();
  REQUIRE(kinds.size() == 3);
  CHECK(kinds[0].name == "runner");
  CHECK(kinds[1].name == "walker");
  CHECK(kinds[2].name == "brute");
  CHECK(kinds[0].radius < kinds[1].radius);
  CHECK(kinds[1].radius < kinds[2].radius);
  CHECK(kinds[0].max_speed > kinds[1].max_speed);
  CHECK(kinds[1].max_speed > kinds[2].max_speed);
  // The walker is the swarm's default agent.
  const SwarmParams d{};
  CHECK(kinds[1].radius == d.radius);
  CHECK(kinds[1].max_speed == d.max_speed);
  CHECK(kinds[1].max_turn_rate == d.max_turn_rate);
  CHECK(check_agent_kinds(kinds) == "");
  CHECK(find_agent_kind(kinds, "brute") == 2);
  CHECK(find_agent_kind(kinds, "ghost") == -1);
}

TEST_CASE("check_agent_kinds names the kind and the field that is wrong") {
  const std::vector<AgentKind> good = default_agent_kinds();
  auto with = [&](auto change) {
    std::vector<AgentKind> k = good;
    change(k);
    return check_agent_kinds(k);
  };
  auto contains = [](const std::string& text, const std::string& part) {
    INFO(text);
    return text.find(part) != std::string::npos;
  };
  CHECK(contains(with([](auto& k) { k[2].radius = 2.5f; }), "kinds[2] 'brute': radius 2.5 is outside 0.2..2 cells"));
  CHECK(contains(with([](auto& k) { k[0].radius = 0.1f; }), "kinds[0] 'runner': radius"));
  CHECK(contains(with([](auto& k) { k[0].radius = std::nanf(""); }), "radius"));
  CHECK(with([](auto& k) { k[2].radius = 2.0f; }) == "");
  CHECK(with([](auto& k) { k[0].radius = 0.2f; }) == "");
  // Radius is in cells: 3 world units is 1.5 cells of 2 units.
  CHECK(check_agent_kinds(std::vector<AgentKind>{{"big", 3.0f}}, 2.0f) == "");
  CHECK(contains(check_agent_kinds(std::vector<AgentKind>{{"big", 3.0f}}, 1.0f), "radius 3"));
  CHECK(contains(with([](auto& k) { k[1].name = "runner"; }), "kinds[1] 'runner': name is used twice (also kinds[0])"));
  CHECK(contains(with([](auto& k) { k[1].name = ""; }), "kinds[1]: name"));
  CHECK(contains(with([](auto& k) { k[1].name = "a:b"; }), "kinds[1]: name"));
  CHECK(contains(with([](auto& k) { k[1].name = "two words"; }), "kinds[1]: name"));
  CHECK(contains(with([](auto& k) { k[1].max_speed = 0.0f; }), "'walker': speed 0"));
  CHECK(contains(with([](auto& k) { k[1].max_speed = INFINITY; }), "'walker': speed"));
  CHECK(contains(with([](auto& k) { k[1].separation_weight = -1.0f; }), "'walker': separation_weight -1"));
  CHECK(contains(with([](auto& k) { k[1].max_turn_rate = 0.0f; }), "'walker': turn_rate 0"));
  CHECK(contains(with([](auto& k) { k[1].colour = 0x1000000u; }), "'walker': colour"));
  CHECK(contains(with([](auto& k) { k[1].spawn_weight = -2.0f; }), "'walker': weight -2"));
  CHECK(with([](auto& k) { k[1].spawn_weight = 0.0f; }) == "");  // never spawned, but valid
  CHECK(contains(with([](auto& k) {
                   for (auto& kind : k) kind.spawn_weight = 0.0f;
                 }),
                 "every kind has weight 0"));
  CHECK(contains(check_agent_kinds({}), "no kinds"));
  std::vector<AgentKind> many(kMaxAgentKinds + 1);
  // Appended, not "k" + std::to_string(i): GCC 12 at -O3 (Release) reports a false
  // -Werror=restrict inside operator+(const char*, std::string&&).
  for (std::size_t i = 0; i < many.size(); ++i) many[i].name = std::string("k").append(std::to_string(i));
  CHECK(contains(check_agent_kinds(many), "too many kinds: 17"));
  many.pop_back();
  CHECK(check_agent_kinds(many) == "");
}

TEST_CASE("pick_agent_kind chooses in proportion to the weights, never a weight-0 kind, deterministically") {
  const std::uint64_t seed = test_seed(4242);
  std::vector<AgentKind> kinds = default_agent_kinds();  // weights 3 : 6 : 1
  kinds.insert(kinds.begin() + 1, AgentKind{"ghost", 0.3f, 1.0f, 1.0f, 1.0f, 0xFFFFFF, 0.0f});
  REQUIRE(spawnable_kind_count(kinds) == 3);
  SplitMix rng{seed};
  std::array<int, 4> counts{};
  constexpr int kDraws = 200000;
  for (int i = 0; i < kDraws; ++i) {
    const std::uint8_t k = pick_agent_kind(kinds, rng.next());
    REQUIRE(k < kinds.size());
    ++counts[k];
  }
  CHECK(counts[1] == 0);  // weight 0
  CHECK(static_cast<double>(counts[0]) / kDraws == doctest::Approx(0.3).epsilon(0.02));
  CHECK(static_cast<double>(counts[2]) / kDraws == doctest::Approx(0.6).epsilon(0.02));
  CHECK(static_cast<double>(counts[3]) / kDraws == doctest::Approx(0.1).epsilon(0.03));
  // The rule at its edges: the lowest bits pick the first spawnable kind, the highest the last.
  CHECK(pick_agent_kind(kinds, 0) == 0);
  CHECK(pick_agent_kind(kinds, ~std::uint64_t{0}) == 3);
  // Same bits, same kind.
  SplitMix a{seed}, b{seed};
  for (int i = 0; i < 1000; ++i) REQUIRE(pick_agent_kind(kinds, a.next()) == pick_agent_kind(kinds, b.next()));
  // No positive weight: kind 0.
  for (auto& k : kinds) k.spawn_weight = 0.0f;
  CHECK(pick_agent_kind(kinds, 12345) == 0);
  CHECK(spawnable_kind_count(kinds) == 0);
}
