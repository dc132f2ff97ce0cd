// Exit status shared by the subcommands (a subcommand callback cannot return a value).
#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {
int g_exit_code = 0;
}  // namespace

int exit_code() { return g_exit_code; }
void set_exit_code(int code) { g_exit_code = code; }

}  // namespace swarmfield::tool
