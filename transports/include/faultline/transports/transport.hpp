#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/types.hpp"

namespace faultline::transports {

/// A registered buffer. Owned by the caller; must not outlive the Device that made it.
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  virtual void* addr() const = 0;
  virtual size_t length() const = 0;
  /// What a peer needs to target [addr() + offset, addr() + offset + length) with RDMA.
  virtual RemoteBuffer remote(size_t offset, size_t length) const = 0;
  RemoteBuffer remote() const { return remote(0, length()); }
};

/// One reliable endpoint (a verbs RC QP with its CQ, or a libfabric RDM endpoint with its CQ).
/// Not thread-safe: one thread posts and polls. Must not outlive its Device.
class Endpoint {
 public:
  virtual ~Endpoint() = default;

  /// The opaque blob the peer passes to `connect` (verbs: QPN, PSN, GID, LID, MTU;
  /// ofi: the fi_getname address).
  virtual std::vector<std::byte> address() const = 0;
  /// Connects to the peer whose `address()` is given.
  virtual Status connect(std::span<const std::byte> peer_address) = 0;

  /// Posts a send-side work request. Fails without posting on a request the endpoint cannot
  /// carry (segment count, inline size, missing capability), naming the limit.
  virtual Status post_send(const WorkRequest& request) = 0;
  virtual Status post_recv(const RecvRequest& request) = 0;

  /// Waits up to `timeout` for at least one completion and returns how many were written to
  /// `out` (0 when the timeout passed). Error completions are returned like any other; a
  /// failure of the native poll itself is an error, never zero completions.
  virtual Result<size_t> poll(std::span<Completion> out, std::chrono::milliseconds timeout) = 0;

  /// Moves the endpoint to the error state: outstanding work completes with kWrFlushErr
  /// (as far as the transport can; see Capabilities::flushes_sends_on_error) and later posts
  /// fail with a named error.
  virtual Status modify_to_error() = 0;

  /// The QP number (verbs) or an endpoint number unique in this process (ofi).
  virtual uint32_t qp_num() const = 0;
  virtual const EndpointConfig& config() const = 0;
};

/// One entry of a verbs port's GID table.
struct GidEntry {
  uint32_t index = 0;
  std::string gid;   ///< "fe80::1c67:aff:fe8a:4d6e", "::ffff:169.254.7.1"
  std::string type;  ///< "IB", "RoCE v1", "RoCE v2"
};

/// A device as `faultline devices` lists it.
struct DeviceInfo {
  std::string transport;        ///< "ofi", "verbs"
  std::string provider;         ///< ofi: the provider name ("tcp", "shm"); verbs: the driver
  std::string native_provider;  ///< ofi: fi_info's prov_name ("tcp;ofi_rxm")
  std::string name;             ///< device to pass as --device ("lo", "shm", "rxe0")
  std::string fabric;           ///< ofi fabric name, verbs node GUID
  std::string firmware;
  std::optional<uint32_t> vendor_id;       ///< verbs: who the device says it is
  std::optional<uint32_t> vendor_part_id;  ///< (ibv_query_device); absent for ofi
  uint32_t port = 0;                       ///< verbs port number; 0 where ports do not apply
  std::string state;                       ///< "active", "down", ...
  std::string link_layer;                  ///< verbs: "Ethernet" or "InfiniBand"
  std::vector<GidEntry> gids;              ///< verbs: the port's GID table
  /// verbs: what the port speaks on the wire, by the device profiles' names ("InfiniBand",
  /// "RoCE v1", "RoCE v2", "iWARP"): RoCE's from the GID types the port holds.
  std::vector<std::string> wire_protocols;
  std::optional<uint32_t> gid_index;  ///< verbs: the GID an opened device uses, and why
  std::string gid_choice;
  DeviceLimits limits;
  Capabilities capabilities;
  /// verbs: the QP types ibv_create_qp made here (true) or refused (false), by the device
  /// profiles' names (RC, UC, UD); empty where not probed (ofi).
  std::map<std::string, bool> qp_types;
};

/// An opened device. Owns its native resources; endpoints and memory regions made from it
/// must be destroyed first. Not thread-safe.
class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual Result<std::unique_ptr<MemoryRegion>> register_memory(void* addr, size_t length,
                                                                uint32_t access) = 0;
  /// Checks `config` against the device limits first (see check_endpoint_config); unless
  /// `config.raw`, a violation is returned without calling the native create.
  virtual Result<std::unique_ptr<Endpoint>> create_endpoint(const EndpointConfig& config) = 0;
};

/// Which device to open. Empty fields mean "the transport's default".
struct DeviceSelector {
  std::string provider;
  std::string device;
  uint32_t port = 0;                  ///< verbs: 0 picks the first active port
  std::optional<uint32_t> gid_index;  ///< verbs: unset picks automatically (RoCE v2 IPv4 first)
};

/// One transport kind. Registered in registry.cpp.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string_view name() const = 0;
  /// Every device present, with its limits. An empty list is not an error.
  virtual Result<std::vector<DeviceInfo>> list_devices() const = 0;
  /// Opens one device. An unknown provider or device is kNotFound naming the ones present.
  virtual Result<std::unique_ptr<Device>> open(const DeviceSelector& selector) const = 0;
};

}  // namespace faultline::transports
