#include "swarmfield/client/token_file.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "swarmfield/cli/control_chars.hpp"

namespace swarmfield::client {

bool read_token_file(const std::string& path, std::size_t needed, std::vector<protocol::ConnectToken>& tokens,
                     std::string& error) {
  tokens.clear();
  const std::string shown = "--token-file " + cli::printable_ascii(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    error = shown + ": not a readable regular file";
    return false;
  }
  if (static_cast<std::size_t>(st.st_size) > kMaxTokenFileBytes) {
    error = shown + ": larger than " + std::to_string(kMaxTokenFileBytes) + " bytes";
    return false;
  }
  std::ifstream in(path);
  if (!in) {
    error = shown + ": can not be read";
    return false;
  }
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::string why;
    auto token = protocol::decode_connect_token(line, &why);
    if (!token) {
      error = shown + " line " + std::to_string(number) + ": " + why;
      return false;
    }
    tokens.push_back(std::move(*token));
  }
  if (tokens.size() < needed) {
    error = shown + ": holds " + std::to_string(tokens.size()) + " tokens, " + std::to_string(needed) +
            " needed (each connection uses its own)";
    return false;
  }
  return true;
}

}  // namespace swarmfield::client
