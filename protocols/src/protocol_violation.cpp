#include "faultline/protocols/protocol_violation.hpp"

namespace faultline::protocols {

std::string ProtocolViolation::describe() const {
  std::string text = message + ": " + field + " expected " + std::to_string(expected) +
                     ", actual " + std::to_string(actual);
  if (!detected_by.empty()) text += " (detected by " + detected_by + ")";
  if (!detail.empty()) text += "; " + detail;
  return text;
}

Error ProtocolViolation::to_error() const {
  return Error{ErrorCode::kProtocolViolation, describe()};
}

}  // namespace faultline::protocols
