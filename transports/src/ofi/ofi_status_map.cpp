#include "faultline/transports/ofi/ofi_status_map.hpp"

#include <rdma/fi_errno.h>

#include <array>
#include <cerrno>
#include <utility>

namespace faultline::transports::ofi {

namespace {

struct OfiErrorRow {
  int code;
  const char* name;
  CompletionStatus status;
};

// One row per libfabric error a completion can carry. The status is the ibv_wc_status a verbs
// stack gives for the same cause.
constexpr std::array kOfiErrorTable{
    OfiErrorRow{FI_ETRUNC, "FI_ETRUNC", CompletionStatus::kLocLenErr},
    OfiErrorRow{FI_EMSGSIZE, "FI_EMSGSIZE", CompletionStatus::kLocLenErr},
    OfiErrorRow{FI_EACCES, "FI_EACCES", CompletionStatus::kRemAccessErr},
    OfiErrorRow{FI_EKEYREJECTED, "FI_EKEYREJECTED", CompletionStatus::kRemAccessErr},
    OfiErrorRow{FI_EPERM, "FI_EPERM", CompletionStatus::kRemAccessErr},
    OfiErrorRow{FI_ECANCELED, "FI_ECANCELED", CompletionStatus::kWrFlushErr},
    OfiErrorRow{FI_ENORX, "FI_ENORX", CompletionStatus::kRnrRetryExcErr},
    OfiErrorRow{FI_ETIMEDOUT, "FI_ETIMEDOUT", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_ENOTCONN, "FI_ENOTCONN", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_ECONNRESET, "FI_ECONNRESET", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_ECONNREFUSED, "FI_ECONNREFUSED", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_ECONNABORTED, "FI_ECONNABORTED", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_EHOSTUNREACH, "FI_EHOSTUNREACH", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_ENETUNREACH, "FI_ENETUNREACH", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_ENETDOWN, "FI_ENETDOWN", CompletionStatus::kRetryExcErr},
    OfiErrorRow{EPIPE, "EPIPE", CompletionStatus::kRetryExcErr},
    OfiErrorRow{FI_EREMOTEIO, "FI_EREMOTEIO", CompletionStatus::kRemOpErr},
    OfiErrorRow{FI_EINVAL, "FI_EINVAL", CompletionStatus::kLocQpOpErr},
    OfiErrorRow{FI_EOPNOTSUPP, "FI_EOPNOTSUPP", CompletionStatus::kRemInvReqErr},
    OfiErrorRow{FI_EFAULT, "FI_EFAULT", CompletionStatus::kLocProtErr},
    OfiErrorRow{FI_EOVERRUN, "FI_EOVERRUN", CompletionStatus::kFatalErr},
    OfiErrorRow{FI_EIO, "FI_EIO", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_ENOMEM, "FI_ENOMEM", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_EOTHER, "FI_EOTHER", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_ENODATA, "FI_ENODATA", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_EAGAIN, "FI_EAGAIN", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_ENOSYS, "FI_ENOSYS", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_EBUSY, "FI_EBUSY", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_ENOENT, "FI_ENOENT", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_ETOOSMALL, "FI_ETOOSMALL", CompletionStatus::kGeneralErr},
    OfiErrorRow{FI_EBADFLAGS, "FI_EBADFLAGS", CompletionStatus::kGeneralErr},
};

const OfiErrorRow* find_row(int fi_errno) {
  for (const auto& row : kOfiErrorTable) {
    if (row.code == fi_errno) return &row;
  }
  return nullptr;
}

// The one status table names libfabric's own errors by number: checked against fi_errno.h.
static_assert(kFiEtrunc == FI_ETRUNC && kFiEoverrun == FI_EOVERRUN && kFiEnorx == FI_ENORX);
static_assert(completion_status_row(CompletionStatus::kRemAccessErr).fi_errno == FI_EACCES);
static_assert(completion_status_row(CompletionStatus::kGeneralErr).fi_errno == FI_EIO);

}  // namespace

CompletionStatus completion_status_from_ofi_error(int fi_errno) {
  if (fi_errno == FI_SUCCESS) return CompletionStatus::kSuccess;
  const OfiErrorRow* row = find_row(fi_errno);
  return row != nullptr ? row->status : CompletionStatus::kGeneralErr;
}

int ofi_error_for_status(CompletionStatus status) {
  return completion_status_row(status).fi_errno;  // 0, FI_SUCCESS, for kSuccess
}

std::string_view ofi_error_name(int fi_errno) {
  if (fi_errno == FI_SUCCESS) return "FI_SUCCESS";
  const OfiErrorRow* row = find_row(fi_errno);
  return row != nullptr ? row->name : "FI_E(unnamed)";
}

}  // namespace faultline::transports::ofi
