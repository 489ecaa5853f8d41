#pragma once

#include <cstdint>
#include <string>

#include "faultline/core/status.hpp"

namespace faultline::protocols {

/// A peer broke a protocol contract: which message, what the contract says, what came, and
/// which side noticed. Returned and reported; never a reason to abort the process.
struct ProtocolViolation {
  std::string message;  ///< "PushRequest"
  std::string field;    ///< "segment count", "lens length", ...
  uint64_t expected = 0;
  uint64_t actual = 0;
  std::string detected_by;  ///< "server", "worker"
  std::string detail;       ///< anything else worth saying

  /// "PushRequest: segment count expected 3, actual 2 (detected by server)"
  std::string describe() const;
  /// The same as a kProtocolViolation error, for Status-returning callers.
  Error to_error() const;
};

}  // namespace faultline::protocols
