// The real swarmfield-server on the sample Tiled and PNG maps (docs/maps): it loads them with
// --map, runs, and stops by itself; a broken Tiled map is one error line and exit 2.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "loopback_support.hpp"
#include "swarmfield/io/png_writer.hpp"
#include "temp_dir.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using test::ServerProcess;
using test::summary_value;

TEST_CASE("loopback: the server runs the sample .tmj and .png maps") {
  for (const std::string name : {"sample_city.tmj", "sample_city.png"}) {
    const std::string path = std::string(SWARMFIELD_SOURCE_DIR) + "/docs/maps/" + name;
    ServerProcess server({"--port", "0", "--bind", "127.0.0.1", "--map", path, "--agents", "50", "--duration", "1"});
    REQUIRE(server.started());
    const auto code = server.wait_exit(15s);
    REQUIRE(code.has_value());
    INFO("stderr: " << server.err());
    CHECK(*code == 0);
    CHECK(server.err().find("map='" + name + "' 48x32") != std::string::npos);
    CHECK(summary_value(server.out(), "ticks") >= 1);
  }
}

TEST_CASE("loopback: a Tiled map the server can not use is one error line, exit 2") {
  const swarmfield::test::TempDir dir("swarmfield-map-formats-loopback");
  const std::string path = (dir / "bad.tmj").string();
  std::ofstream(path) << R"({"orientation": "orthogonal", "width": 2, "height": 1, "tilesets": [{"firstgid": 1, "source": "t.tsx"}],
                            "layers": [{"name": "g", "type": "tilelayer", "width": 2, "height": 1, "data": [1, 1]}]})";
  const std::string err = test::refused_start_error({"--port", "0", "--bind", "127.0.0.1", "--map", path});
  INFO("stderr: " << err);
  CHECK(err.rfind("error: can not load map: " + path + ": tileset 't.tsx' is external", 0) == 0);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

TEST_CASE("loopback: a PNG map without a walkable cell is refused like any other map") {
  const swarmfield::test::TempDir dir("swarmfield-map-formats-loopback");
  const std::string path = (dir / "walls.png").string();
  std::string error;
  REQUIRE(io::write_png_rgb(path, 4, 3, std::vector<std::uint8_t>(4 * 3 * 3, 0), error));  // all black
  CHECK(test::refused_start_error({"--port", "0", "--bind", "127.0.0.1", "--map", path}) ==
        "error: map 'walls.png' has no walkable cell\n");
}

TEST_CASE("loopback: players appear at the PNG map's spawn cells (red pixels), the free one first") {
  // A 24 x 12 white map with two red spawn pixels far from its centre: (2, 2) and (21, 9).
  const swarmfield::test::TempDir dir("swarmfield-map-formats-loopback");
  const std::string path = (dir / "spawns.png").string();
  constexpr int kW = 24, kH = 12;
  std::vector<std::uint8_t> rgb(kW * kH * 3, 255);
  for (const auto& [x, y] : {std::pair{2, 2}, std::pair{21, 9}}) {
    rgb[(y * kW + x) * 3 + 1] = 0;
    rgb[(y * kW + x) * 3 + 2] = 0;
  }
  std::string error;
  REQUIRE(io::write_png_rgb(path, kW, kH, rgb, error));
  ServerProcess server({"--port", "0", "--bind", "127.0.0.1", "--map", path, "--agents", "5"});
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  test::RawClient first, second;
  REQUIRE(test::join(first, ports->tcp, protocol::Role::kPlayer).has_value());
  REQUIRE(test::join(second, ports->tcp, protocol::Role::kPlayer).has_value());
  REQUIRE(server.wait_for_log("(player 2 at", 5s).has_value());
  const std::string err = server.err();
  INFO("stderr: " << err);
  CHECK(err.find("(player 1 at 2.5,2.5)") != std::string::npos);
  CHECK(err.find("(player 2 at 21.5,9.5)") != std::string::npos);
  server.signal(SIGTERM);
  CHECK(server.wait_exit(5s) == std::optional<int>(0));
}

TEST_CASE("loopback: a relative map path from --config that names nothing says it is taken from the current folder") {
  // Before: "error: can not load map: m.map: cannot open file: No such file or directory" for
  // `map = "m.map"` in sub/c.toml: nothing said where the path was looked up. Paths still resolve
  // from the current folder; the message names it.
  const swarmfield::test::TempDir dir("swarmfield-map-formats-loopback");
  std::filesystem::create_directory(dir / "sub");
  const std::string toml = (dir / "sub" / "c.toml").string();
  std::ofstream(toml) << "map = \"swarmfield-no-such-map-7f3a.map\"\n";
  const std::string err = test::refused_start_error({"--port", "0", "--bind", "127.0.0.1", "--config", toml});
  INFO("stderr: " << err);
  CHECK(err.rfind("error: can not load map: swarmfield-no-such-map-7f3a.map: cannot open file: No such file or directory "
                  "(map = \"swarmfield-no-such-map-7f3a.map\" is from the config file " + toml +
                      "; relative paths in it are taken from the current folder, " +
                      std::filesystem::current_path().string() + ", not from the file's folder)\n",
                  0) == 0);
}
