// `swarmfield-tool token`: the backend's side of connect tokens (protocol/transport/connect_token.hpp)
// for tests and small deployments: makes the key a backend shares with its game servers, and
// issues tokens sealed with it.
//   swarmfield-tool token --new-key FILE
//   swarmfield-tool token --key-file FILE --server HOST:PORT [--server ...] [--role player|viewer]
//                         [--name NAME] [--client-id N] [--expires SECONDS] [--timeout SECONDS] [--out FILE]
//   exit 0: written (the token on stdout, or in --out); 2: a bad flag, an unreadable key file,
//   a key file that exists already (--new-key), an unwritable output.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/config/config_toml.hpp"
#include "swarmfield/protocol/transport/connect_token.hpp"
#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {

struct TokenOptions {
  std::string new_key;
  std::string key_file;
  std::vector<std::string> servers;
  std::string role = "player";
  std::string name = "player";
  std::uint64_t client_id = 0;
  std::uint64_t expires_s = 300;
  std::uint32_t timeout_s = 0;
  std::int64_t now = -1;
  std::string out;
};

/// Writes `text` to a new file only its owner can read (0600): it holds a secret. False with
/// `error` when it can not; `exclusive` refuses an existing file.
bool write_secret(const std::string& path, const std::string& text, bool exclusive, std::string& error) {
  const int flags = O_WRONLY | O_CREAT | (exclusive ? O_EXCL : O_TRUNC);
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    error = path + ": " + (errno == EEXIST ? std::string("exists already (a key is never overwritten)")
                                           : std::string("can not be created"));
    return false;
  }
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) error = path + ": write failed";
  return ok;
}

bool read_key(const std::string& path, protocol::TokenKey& key, std::string& error) {
  // The server's reader (regular files only, at most 1 MiB), then the key's text.
  std::string text;
  if (std::string e = server::read_config_text(path, text, "key file"); !e.empty()) {
    error = "--key-file: " + cli::printable_ascii(e);
    return false;
  }
  auto parsed = protocol::parse_token_key(text, &error);
  if (!parsed) {
    error = "--key-file " + cli::printable_ascii(path) + ": " + error;
    return false;
  }
  key = *parsed;
  return true;
}

int run_token(const TokenOptions& opt) {
  std::string error;
  if (!opt.new_key.empty()) {
    if (!write_secret(opt.new_key, protocol::format_token_key(protocol::make_token_key()) + "\n", true, error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 2;
    }
    std::printf("key=%s (share it with the game servers: --auth tokens --key-file %s)\n", opt.new_key.c_str(),
                opt.new_key.c_str());
    return 0;
  }
  if (opt.key_file.empty() || opt.servers.empty()) {
    std::fprintf(stderr, "error: give --new-key FILE, or --key-file FILE and at least one --server HOST:PORT\n");
    return 2;
  }
  protocol::TokenKey key{};
  if (!read_key(opt.key_file, key, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }
  protocol::TokenGrant grant;
  grant.client_id = opt.client_id;
  grant.role = opt.role == "viewer" ? protocol::Role::kViewer : protocol::Role::kPlayer;
  grant.name = opt.name;
  grant.server_addresses = opt.servers;
  grant.timeout_s = opt.timeout_s;
  const auto now = opt.now >= 0 ? static_cast<std::uint64_t>(opt.now) : protocol::unix_seconds();
  const auto token = protocol::issue_connect_token(key, grant, now, opt.expires_s, &error);
  if (!token) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }
  const std::string text = protocol::encode_connect_token(*token) + "\n";
  if (opt.out.empty()) {
    std::fputs(text.c_str(), stdout);
  } else if (!write_secret(opt.out, text, false, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }
  return 0;
}

}  // namespace

void add_token_command(CLI::App& app) {
  auto opt = std::make_shared<TokenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "token",
      "Connect tokens, the backend's side (README: Connect tokens): --new-key FILE makes the key a backend shares "
      "with its servers (--auth tokens --key-file FILE); with --key-file and --server it prints a token for one "
      "player or spectator (clients read it with --token-file). Exit 0 when written, 2 on a bad flag or file");
  cmd->add_option("--new-key", opt->new_key, "Write a fresh key to this new file (mode 0600; never overwrites)");
  cmd->add_option("--key-file", opt->key_file, "The key to seal tokens with (64 hex digits)");
  cmd->add_option("--server", opt->servers, "HOST:PORT of a server the token is good for (1..8; repeat the flag)");
  cmd->add_option("--role", opt->role, "player or viewer (a spectator)")
      ->check(CLI::IsMember({"player", "viewer"}));
  cmd->add_option("--name", opt->name, "The player's name as the server shows it (<= 64 bytes)");
  cmd->add_option("--client-id", opt->client_id, "The backend's id of the player (logged by the server)");
  cmd->add_option("--expires", opt->expires_s, "Seconds the token stays valid (>= 1)")->check(CLI::Range(1, 86400 * 365));
  cmd->add_option("--timeout", opt->timeout_s, "Idle timeout the server applies to this client, seconds; 0 = the server's")
      ->check(CLI::Range(0, 3600));
  cmd->add_option("--now", opt->now, "Testing aid: issue as if the Unix time were this (e.g. to make an expired token)");
  cmd->add_option("--out", opt->out, "Write the token to this file (mode 0600) instead of stdout");
  cmd->callback([opt] { set_exit_code(run_token(*opt)); });
}

}  // namespace swarmfield::tool
