#pragma once
// A private temporary directory for one test: made fresh (mkdtemp under /tmp), removed with
// everything in it when the TempDir goes out of scope.

#include <filesystem>
#include <string>
#include <string_view>

namespace swarmfield::test {

struct TempDir {
  /// Makes /tmp/<prefix>-XXXXXX; throws std::runtime_error if it cannot (the test fails).
  explicit TempDir(std::string_view prefix = "swarmfield-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// A path inside the directory.
  [[nodiscard]] std::filesystem::path operator/(std::string_view name) const { return std::filesystem::path(path) / name; }

  std::string path;  ///< the directory, absolute
};

}  // namespace swarmfield::test
