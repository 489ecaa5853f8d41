#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace faultline {

/// Generic error classes, shared by every layer. The native code travels beside it in `Error`.
enum class ErrorCode {
  kInvalidArgument,    ///< the caller asked for something malformed
  kNotFound,           ///< a named device, provider or transport does not exist
  kLimitExceeded,      ///< a requested value is above a device limit
  kUnsupported,        ///< the transport or device cannot do this
  kNativeError,        ///< a native call (verbs, libfabric) failed
  kTimeout,            ///< a deadline passed
  kProtocolViolation,  ///< a peer broke a protocol contract
  kIoError,            ///< a file or socket operation failed
  kInternal,           ///< faultline itself broke
};

const char* to_string(ErrorCode code);

/// Where an error happened. Every field is optional; `describe()` prints what is set.
struct ErrorLocation {
  std::string transport;  ///< "ofi", "verbs"
  std::string provider;   ///< libfabric provider, e.g. "tcp;ofi_rxm"
  std::string device;     ///< "rxe0", "lo", "shm"
  std::optional<uint32_t> port;
  std::optional<uint32_t> qp;
};

/// One error, with everything UCX's logging rules ask for: the call, errno and its text, the
/// location, the generic and native codes, the exact cause, and a likely cause as a hint.
struct Error {
  Error() = default;
  Error(ErrorCode error_code, std::string text) : code(error_code), message(std::move(text)) {}

  ErrorCode code = ErrorCode::kInternal;
  std::string
      message;        ///< the exact cause, e.g. "send_depth 196609 exceeds device max_qp_wr 65535"
  std::string call;   ///< the native call that failed, e.g. "ibv_create_qp"; empty if none
  int sys_errno = 0;  ///< errno (positive), 0 if the failure has none
  std::optional<int64_t> native_code;  ///< provider-specific code (libfabric -FI_*, prov_errno)
  std::string native_name;             ///< symbolic name of the native code, e.g. "FI_EAGAIN"
  ErrorLocation where;
  std::string hint;  ///< a likely cause and what to try; kept separate from the message

  /// One line: "ibv_create_qp failed: Cannot allocate memory (errno 12) on device rxe0 port 1
  /// qp 0x12 [kNativeError]: <message>". The hint is not included; see `describe_with_hint`.
  std::string describe() const;
  /// `describe()` followed by "\n  hint: <hint>" when there is a hint.
  std::string describe_with_hint() const;

  Error&& with_hint(std::string text) &&;
  Error&& at(ErrorLocation location) &&;
};

/// Builds an Error for a failed native call whose failure is an errno value.
Error errno_error(std::string call, int sys_errno, std::string message = {});

/// Success, or one Error. Cheap to return when ok.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  /// Precondition: !ok() (checked: an ok Status has no error to give).
  const Error& error() const& { return error_.value(); }
  Error&& take_error() && { return std::move(error_.value()); }

 private:
  std::optional<Error> error_;
};

/// A value of T, or one Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  /// From a failed Status. A Status that holds no error is a bug in the caller: it becomes
  /// an internal error saying so, never undefined behaviour.
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : state_(status.ok() ? Error{ErrorCode::kInternal, "Result made from an ok Status"}
                           : std::move(status).take_error()) {}

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

  const Error& error() const& { return std::get<Error>(state_); }
  Error&& take_error() && { return std::get<Error>(std::move(state_)); }
  Status status() const { return ok() ? Status{} : Status{error()}; }

 private:
  std::variant<T, Error> state_;
};

}  // namespace faultline

/// Returns the error of a Status-returning expression from the enclosing function.
#define FAULTLINE_RETURN_IF_ERROR(...)                  \
  do {                                                  \
    auto faultline_status_ = (__VA_ARGS__);             \
    if (!faultline_status_.ok()) {                      \
      return std::move(faultline_status_).take_error(); \
    }                                                   \
  } while (false)
