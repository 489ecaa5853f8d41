#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace faultline::harness {

/// One side's view of the two endpoints its connect joined, kept to explain a first message
/// that never gets through: which addresses were tried, on which hosts and devices, and the
/// likely cause (a loopback address offered to another host: an agent on `lo`).
class FirstContact {
 public:
  /// What a side adds to the endpoint info it sends its peer: its host and device.
  static nlohmann::json own_info(const std::string& device);

  /// After the exchange: both addresses (`Endpoint::address()`), this side's device and the
  /// peer's info (with `own_info`'s fields; a peer without them is "?").
  void joined(std::span<const std::byte> own, std::span<const std::byte> peer,
              const std::string& own_device, const nlohmann::json& peer_info);
  /// A completion succeeded: the path works, later failures are not about it.
  void reached() { reached_ = true; }

  /// While nothing got through: "; addresses: this side 169.254.77.1:4012 on head (device
  /// eth0), the peer ... on node2 (device eth0)"; else "".
  std::string note() const;
  /// While nothing got through: what to check, or what to change; else "".
  std::string hint() const;

 private:
  std::string addresses_;
  bool loopback_across_hosts_ = false;
  bool reached_ = false;
};

}  // namespace faultline::harness
