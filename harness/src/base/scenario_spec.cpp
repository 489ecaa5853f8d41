#include "faultline/harness/base/scenario_spec.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <span>

#include "faultline/core/hex.hpp"

namespace faultline::harness {

Topology topology_of(const nlohmann::json& document) {
  return document.value("topology", "pair") == "ring" ? Topology::kRing : Topology::kPair;
}

bool KnownFailure::applies_to(const transports::Target& target) const {
  const transports::Target filled = target.with_defaults();
  return (transport.empty() || transport == filled.transport) &&
         (provider.empty() || provider == filled.provider);
}

std::string ScenarioSpec::exclude_reason(const std::vector<transports::Target>& targets) const {
  std::string reason;
  for (const auto& known : known_failures) {
    if (std::all_of(targets.begin(), targets.end(),
                    [&](const transports::Target& target) { return known.applies_to(target); }))
      reason = known.reason;
  }
  return reason;
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return to_hex(std::as_bytes(std::span(digest, length)));
}

}  // namespace faultline::harness
