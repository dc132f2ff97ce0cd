#pragma once
// Connections open per peer address, for the per-address limits of the game port (TcpServer,
// --max-connections-per-address) and the operations endpoints (OperationsHttp): one count per
// address, its entry dropped when the count returns to zero, so the map holds only addresses
// with a connection open. An IPv6 address counts as its /64 (counted_address()). Not thread-safe
// (OperationsHttp holds its mutex around it).
#include <algorithm>
#include <cstddef>
#include <map>

namespace swarmfield::server {

/// The key `address` is counted under: an IPv6 address its /64 (a host is routinely given a whole
/// /64: counted per address, one host got past every per-address limit from its 2^64 addresses);
/// an IPv4 address, an IPv4-mapped IPv6 one (IPv4 on a dual-stack socket) and an address given as
/// text, itself.
template <class Address>
Address counted_address(const Address& address) {
  if constexpr (requires { address.to_v6().is_v4_mapped(); }) {
    if (address.is_v6() && !address.to_v6().is_v4_mapped()) {
      auto bytes = address.to_v6().to_bytes();
      std::fill(bytes.begin() + 8, bytes.end(), static_cast<unsigned char>(0));
      return Address(decltype(address.to_v6())(bytes));
    }
  }
  return address;
}

template <class Address>
class PerAddressCount {
 public:
  /// Counts one more connection from `address` and returns its count, this one included.
  std::size_t add(const Address& address) { return ++counts_[counted_address(address)]; }

  /// Counts one more connection from `address` if fewer than `limit` are counted; false (and
  /// nothing counted) otherwise.
  bool add_below(const Address& address, std::size_t limit) {
    if (count(address) >= limit) return false;
    add(address);
    return true;
  }

  /// One connection from `address` ended; nothing happens if none is counted.
  void remove(const Address& address) {
    const auto it = counts_.find(counted_address(address));
    if (it != counts_.end() && --it->second == 0) counts_.erase(it);
  }

  /// Connections counted from `address`.
  [[nodiscard]] std::size_t count(const Address& address) const {
    const auto it = counts_.find(counted_address(address));
    return it == counts_.end() ? 0 : it->second;
  }

 private:
  std::map<Address, std::size_t> counts_;
};

}  // namespace swarmfield::server
