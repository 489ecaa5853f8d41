#include "faultline/core/status.hpp"

#include <cstring>
#include <sstream>

namespace faultline {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kLimitExceeded: return "limit_exceeded";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kNativeError: return "native_error";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kProtocolViolation: return "protocol_violation";
    case ErrorCode::kIoError: return "io_error";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

std::string Error::describe() const {
  std::ostringstream out;
  if (!call.empty()) {
    out << call << " failed";
    if (sys_errno != 0) {
      out << ": " << std::strerror(sys_errno) << " (errno " << sys_errno << ")";
    }
  } else {
    out << to_string(code);
  }
  if (native_code) {
    out << " native " << (native_name.empty() ? "code" : native_name) << " " << *native_code;
  }
  if (!where.transport.empty()) out << " on " << where.transport;
  if (!where.provider.empty()) out << " provider " << where.provider;
  if (!where.device.empty()) out << " device " << where.device;
  if (where.port) out << " port " << *where.port;
  if (where.qp) out << " qp 0x" << std::hex << *where.qp << std::dec;
  if (!call.empty()) out << " [" << to_string(code) << "]";
  if (!message.empty()) out << ": " << message;
  return out.str();
}

std::string Error::describe_with_hint() const {
  return hint.empty() ? describe() : describe() + "\n  hint: " + hint;
}

Error&& Error::with_hint(std::string text) && {
  hint = std::move(text);
  return std::move(*this);
}

Error&& Error::at(ErrorLocation location) && {
  where = std::move(location);
  return std::move(*this);
}

Error errno_error(std::string call, int sys_errno, std::string message) {
  Error error;
  error.code = ErrorCode::kNativeError;
  error.call = std::move(call);
  error.sys_errno = sys_errno;
  error.message = std::move(message);
  return error;
}

}  // namespace faultline
