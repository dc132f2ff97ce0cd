// `swarmfield-tool probe [--port P] [--host H] [--path /healthz] [--timeout S]`: one HTTP GET
// of the server's operations endpoint; exit 0 on a 2xx answer, 1 otherwise (refused, timeout,
// 503). The port defaults to $SWARMFIELD_HTTP_PORT (the server's own setting), else 8080, so
// the image's HEALTHCHECK follows the port the container was given; no curl in the image.
#include <httplib.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {
struct ProbeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string path = "/healthz";
  double timeout_s = 2.0;
  std::string bad_env_port;  // SWARMFIELD_HTTP_PORT when set to something that is not a port 1..65535
};

// What went wrong, in words: httplib 0.11's to_string() says only "Connection" or "Read".
std::string describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "could not connect (nothing listening there?)";
    case httplib::Error::ConnectionTimeout: return "connection timed out (--timeout)";
    case httplib::Error::Read: return "no complete answer (closed, or timed out: --timeout)";
    case httplib::Error::Write: return "could not send the request";
    default: return httplib::to_string(e);
  }
}
}  // namespace

void add_probe_command(CLI::App& app) {
  auto options = std::make_shared<ProbeOptions>();
  if (const char* env = std::getenv("SWARMFIELD_HTTP_PORT"); env != nullptr) {
    int v = 0;
    const auto [end, ec] = std::from_chars(env, env + std::strlen(env), v);
    if (ec == std::errc{} && *end == '\0' && v >= 1 && v <= 65535) {
      options->port = v;
    } else {
      options->bad_env_port = env;  // an error for probe without --port only: other subcommands ignore it
    }
  }
  CLI::App* cmd = app.add_subcommand(
      "probe", "GET an operations endpoint of a running server (/healthz, /readyz, /metrics); exit 0 on HTTP 2xx, else 1");
  cmd->add_option("--host", options->host, "Server address")->capture_default_str();
  CLI::Option* port_opt = cmd->add_option("--port", options->port, "Its --http-port (default: $SWARMFIELD_HTTP_PORT, else 8080)")->check(CLI::Range(1, 65535))->capture_default_str();
  cmd->add_option("--path", options->path, "Path to get")->capture_default_str();
  cmd->add_option("--timeout", options->timeout_s, "Seconds to wait for the answer")->check(CLI::Range(0.1, 60.0))->capture_default_str();
  cmd->callback([options, port_opt] {
    if (port_opt->count() == 0 && !options->bad_env_port.empty()) {
      // Silently probing 8080 instead reported "Connection" for a port nobody asked for.
      std::fprintf(stderr,
                   "error: environment SWARMFIELD_HTTP_PORT='%s' is not a port 1..65535 (the server's -1 = off and 0 = "
                   "a free port can not be probed); give --port\n",
                   options->bad_env_port.c_str());
      set_exit_code(2);
      return;
    }
    if (options->path.empty() || options->path[0] != '/') {
      std::fprintf(stderr, "error: --path must start with / (got '%s')\n", options->path.c_str());
      set_exit_code(2);
      return;
    }
    httplib::Client client(options->host, options->port);
    const auto sec = static_cast<time_t>(options->timeout_s);
    const auto usec = static_cast<time_t>((options->timeout_s - static_cast<double>(sec)) * 1e6);
    client.set_connection_timeout(sec, usec);
    client.set_read_timeout(sec, usec);
    const auto res = client.Get(options->path);
    if (!res) {
      std::fprintf(stderr, "probe %s:%d%s: %s\n", options->host.c_str(), options->port, options->path.c_str(),
                   describe(res.error()).c_str());
      set_exit_code(1);
      return;
    }
    std::fputs(res->body.c_str(), stdout);
    if (res->status < 200 || res->status > 299) {
      std::fprintf(stderr, "probe %s:%d%s: HTTP %d\n", options->host.c_str(), options->port, options->path.c_str(), res->status);
      set_exit_code(1);
    }
  });
}

}  // namespace swarmfield::tool
