// libFuzzer target: the server's TOML config (--config FILE, parsed by toml++ and validated by
// parse_server_config). The input is the file's text, handed over through an in-memory file
// (memfd), so no disk is touched. Checked: no crash and no exception escapes; a refusal is one
// error line with exit code 2; an accepted config passes validate_config.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "swarmfield/server/config/server_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace server = swarmfield::server;
  static const int fd = memfd_create("fuzz.toml", 0);
  if (fd < 0) std::abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const char* argv[] = {"swarmfield-server", "--config", path.c_str()};
  const auto r = server::parse_server_config(3, argv);
  if (r.action == server::ConfigParseResult::Action::kExit) {
    if (r.exit_code != 2 || r.output.empty() || r.output.rfind("error: ", 0) != 0) std::abort();
    return 0;
  }
  if (!server::validate_config(r.config).empty()) std::abort();
  return 0;
}
