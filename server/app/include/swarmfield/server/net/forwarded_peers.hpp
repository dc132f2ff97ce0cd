#pragma once
// Connections the server's own gateways open to its game port on behalf of a remote peer (the
// browser spectator's WebSocket gateway, web_gateway.hpp): each is known by the local port of
// its local end (the server's own address and a port the gateway's socket bound before it
// connected) and carries the address of the peer it serves. The game port counts such a
// connection against that address, not against the server's own, so the per-address limits hold
// for browsers as for any client and 16 spectators do not shut out the 17th. Nobody else can
// connect from a registered end: the gateway's socket holds the port until the entry is removed,
// and a remote host can not open a TCP connection from the server's own address. Thread-safe
// (the gateway runs on its own thread, the game port on the io thread).
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace swarmfield::server {

class ForwardedPeers {
 public:
  /// The connection from `local_address`:`port` (IP address in text form, as the game port
  /// sees its peer) serves the peer at `peer_address` (an IP address in text form).
  void add(const std::string& local_address, std::uint16_t port, std::string peer_address) {
    const std::lock_guard lock(mutex_);
    peers_[Key{local_address, port}] = std::move(peer_address);
  }

  /// The connection from `local_address`:`port` is closed (nothing happens if none is registered).
  void remove(const std::string& local_address, std::uint16_t port) {
    const std::lock_guard lock(mutex_);
    peers_.erase(Key{local_address, port});
  }

  /// The peer address served by the connection from `address`:`port`, if registered.
  [[nodiscard]] std::optional<std::string> find(const std::string& address, std::uint16_t port) const {
    const std::lock_guard lock(mutex_);
    const auto it = peers_.find(Key{address, port});
    if (it == peers_.end()) return std::nullopt;
    return it->second;
  }

 private:
  using Key = std::pair<std::string, std::uint16_t>;
  mutable std::mutex mutex_;
  std::map<Key, std::string> peers_;
};

}  // namespace swarmfield::server
