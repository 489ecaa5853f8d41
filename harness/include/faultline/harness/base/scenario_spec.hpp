#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/transports/target.hpp"

namespace faultline::harness {

/// How a scenario's roles map onto agents. kPair: every pair of agents in turn, roles[0] and
/// roles[1]; kRing: one run over all agents, each the only role at its rank.
enum class Topology { kPair, kRing };

/// The topology a scenario document names (`"topology"`, default "pair"): the one place the
/// text is read. Anything but "ring" is a pair (the schema allows only the two).
Topology topology_of(const nlohmann::json& document);

/// An exclude entry that names a scenario: its failures on the targets the entry scopes
/// (a transport, a provider; empty: any) are known, so they are xfail with the reason.
struct KnownFailure {
  std::string transport;
  std::string provider;
  std::string reason;
  bool applies_to(const transports::Target& target) const;
};

/// One runnable scenario: a scenario file, or a scenario built into faultline.
struct ScenarioSpec {
  std::string id;
  std::string title;
  std::string description;  ///< optional: what it does, in more words than the title
  std::vector<std::string> tags;
  std::string source;       ///< the file it was loaded from, or "builtin"
  std::string sha256;       ///< of the file's bytes; empty for built-ins
  nlohmann::json document;  ///< the scenario file; null for built-ins
  std::vector<std::string> roles = {"initiator", "responder"};  ///< [0] runs on the initiator
  std::chrono::milliseconds deadline{60000};
  Topology topology = Topology::kPair;
  std::vector<KnownFailure> known_failures;  ///< the exclude entries that name it, in order

  /// The reason of the last known failure that applies to every one of `targets` (the
  /// participants of one run, each on its own target), or "" when none does.
  std::string exclude_reason(const std::vector<transports::Target>& targets) const;
};

/// The SHA-256 of a scenario file's bytes, in hex: the report's `sha256`.
std::string sha256_hex(const std::string& bytes);

}  // namespace faultline::harness
