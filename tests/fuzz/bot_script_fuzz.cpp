// libFuzzer target: the bot script parser on arbitrary text. Checked: no crash; a refusal says
// why; an accepted script has commands, every number finite, durations within the documented
// range, `repeat` only last, and only a `fire` timed.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "swarmfield/client/bot_script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace client = swarmfield::client;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  client::BotScript script;
  client::BotScriptError error;
  if (!client::parse_bot_script(text, "fuzz.bot", script, error)) {
    if (error.message.empty()) std::abort();
    return 0;
  }
  if (script.commands.empty()) std::abort();
  for (std::size_t i = 0; i < script.commands.size(); ++i) {
    const auto& c = script.commands[i];
    if (!std::isfinite(c.x) || !std::isfinite(c.y) || !std::isfinite(c.seconds)) std::abort();
    if (c.seconds < 0.0f || c.seconds > client::kMaxScriptSeconds) std::abort();
    if (c.kind == client::BotCommandKind::kRepeat && i + 1 != script.commands.size()) std::abort();
    if (c.timed && c.kind != client::BotCommandKind::kFire) std::abort();  // only `fire S` is timed
  }
  return 0;
}
