// `swarmfield-tool token` end to end: a key file made once (mode 0600, never overwritten), a
// token for a server that opens under that key with the grant asked for, the errors (no key,
// a bad key, no --server, a bad role), and --version.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "swarmfield/cli/version.hpp"
#include "swarmfield/protocol/transport/connect_token.hpp"
#include "tool_test_support.hpp"

namespace sp = swarmfield::protocol;
using swarmfield::tool::test::Run;
using swarmfield::tool::test::run_tool;

namespace {

std::string read_all(const std::filesystem::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("token: a key once, then tokens that open under it with the grant asked for") {
  const std::filesystem::path dir = swarmfield::tool::test::temp_dir();
  const std::string key = (dir / "match.key").string();
  const Run made = run_tool("token --new-key " + key);
  INFO(made.out);
  REQUIRE(made.status == 0);
  struct stat st {};
  REQUIRE(::stat(key.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const auto parsed_key = sp::parse_token_key(read_all(key));
  REQUIRE(parsed_key);
  const Run again = run_tool("token --new-key " + key);
  CHECK(again.status == 2);
  CHECK(again.out.find("exists already") != std::string::npos);
  CHECK(read_all(key).find(sp::format_token_key(*parsed_key)) == 0);  // untouched

  const Run issued = run_tool("token --key-file " + key + " --server 10.1.2.3:7777 --server 127.0.0.1:7777 --role viewer "
                              "--name spectator --client-id 77 --expires 120 --timeout 20", false);
  INFO(issued.out);
  REQUIRE(issued.status == 0);
  const auto token = sp::decode_connect_token(issued.out);
  REQUIRE(token);
  CHECK(token->expire_unix_s - token->create_unix_s == 120);
  CHECK(token->server_addresses == std::vector<std::string>{"10.1.2.3:7777", "127.0.0.1:7777"});
  const auto now = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  const auto opened = sp::open_hello_token(sp::hello_token_bytes(*token), *parsed_key, now);
  REQUIRE_MESSAGE(opened.token, opened.error);
  CHECK(opened.token->grant.role == sp::Role::kViewer);
  CHECK(opened.token->grant.name == "spectator");
  CHECK(opened.token->grant.client_id == 77);
  CHECK(opened.token->grant.timeout_s == 20);

  const std::string out = (dir / "t.tok").string();
  REQUIRE(run_tool("token --key-file " + key + " --server h:1 --out " + out).status == 0);
  REQUIRE(::stat(out.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(sp::decode_connect_token(read_all(out)));
}

TEST_CASE("token: refusals exit 2 and say what to fix; --version") {
  const std::filesystem::path dir = swarmfield::tool::test::temp_dir();
  const std::string bad = (dir / "bad.key").string();
  std::ofstream(bad) << "0123\n";
  const Run no_key = run_tool("token --key-file " + (dir / "none.key").string() + " --server h:1");
  CHECK(no_key.status == 2);
  CHECK(no_key.out.find("--key-file: can not read key file") != std::string::npos);
  const Run dir_key = run_tool("token --key-file " + dir.string() + " --server h:1");  // the server's reader: regular files only
  CHECK(dir_key.status == 2);
  CHECK(dir_key.out.find("is a directory, not a regular file") != std::string::npos);
  const Run bad_key = run_tool("token --key-file " + bad + " --server h:1");
  CHECK(bad_key.status == 2);
  CHECK(bad_key.out.find("64 hex digits") != std::string::npos);
  const Run no_server = run_tool("token --key-file " + bad);
  CHECK(no_server.status == 2);
  CHECK(no_server.out.find("--server") != std::string::npos);
  CHECK(run_tool("token --key-file " + bad + " --server h:1 --role admin").status == 2);
  const Run version = run_tool("--version");
  CHECK(version.status == 0);
  CHECK(version.out.rfind(std::string("swarmfield-tool ") + swarmfield::cli::kVersion + " (protocol 3)", 0) == 0);
}
