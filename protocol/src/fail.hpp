#pragma once
// Internal to swarmfield_protocol: how a decoder or check reports why it refused its input.
#include <string>
#include <string_view>

namespace swarmfield::protocol::detail {

/// Sets *error (when given) and returns false, so that checks read `return fail(error, "...")`.
inline bool fail(std::string* error, std::string_view message) {
  if (error) error->assign(message);
  return false;
}

}  // namespace swarmfield::protocol::detail
