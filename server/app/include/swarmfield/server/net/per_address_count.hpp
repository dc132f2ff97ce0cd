#pragma once
// Connections open per peer address, for the per-address limits of the game port (TcpServer,
// --max-connections-per-address) and the operations endpoints (OperationsHttp): one count per
// address, its entry dropped when the count returns to zero, so the map holds only addresses
// with a connection open. Not thread-safe (OperationsHttp holds its mutex around it).
#include <cstddef>
#include <map>

namespace swarmfield::server {

template <class Address>
class PerAddressCount {
 public:
  /// Counts one more connection from `address` and returns its count, this one included.
  std::size_t add(const Address& address) { return ++counts_[address]; }

  /// Counts one more connection from `address` if fewer than `limit` are counted; false (and
  /// nothing counted) otherwise.
  bool add_below(const Address& address, std::size_t limit) {
    if (count(address) >= limit) return false;
    add(address);
    return true;
  }

  /// One connection from `address` ended; nothing happens if none is counted.
  void remove(const Address& address) {
    const auto it = counts_.find(address);
    if (it != counts_.end() && --it->second == 0) counts_.erase(it);
  }

  /// Connections counted from `address`.
  [[nodiscard]] std::size_t count(const Address& address) const {
    const auto it = counts_.find(address);
    return it == counts_.end() ? 0 : it->second;
  }

 private:
  std::map<Address, std::size_t> counts_;
};

}  // namespace swarmfield::server
