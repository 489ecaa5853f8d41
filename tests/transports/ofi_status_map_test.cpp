#include <catch2/catch.hpp>

#if FAULTLINE_WITH_OFI
#include <rdma/fi_errno.h>

#include <cerrno>

#include "faultline/transports/ofi/ofi_status_map.hpp"

using namespace faultline;
using namespace faultline::transports;
using faultline::transports::ofi::completion_status_from_ofi_error;
using faultline::transports::ofi::ofi_error_name;

namespace {
struct MappingRow {
  int code;
  const char* name;
  CompletionStatus status;
};
}  // namespace

TEST_CASE("Every libfabric completion error maps to its verbs status", "[unit]") {
  // The expected column is the ibv_wc_status a verbs stack gives for the same cause.
  const MappingRow rows[] = {
      {FI_SUCCESS, "FI_SUCCESS", CompletionStatus::kSuccess},
      {FI_ETRUNC, "FI_ETRUNC", CompletionStatus::kLocLenErr},
      {FI_EMSGSIZE, "FI_EMSGSIZE", CompletionStatus::kLocLenErr},
      {FI_EACCES, "FI_EACCES", CompletionStatus::kRemAccessErr},
      {FI_EKEYREJECTED, "FI_EKEYREJECTED", CompletionStatus::kRemAccessErr},
      {FI_EPERM, "FI_EPERM", CompletionStatus::kRemAccessErr},
      {FI_ECANCELED, "FI_ECANCELED", CompletionStatus::kWrFlushErr},
      {FI_ENORX, "FI_ENORX", CompletionStatus::kRnrRetryExcErr},
      {FI_ETIMEDOUT, "FI_ETIMEDOUT", CompletionStatus::kRetryExcErr},
      {FI_ENOTCONN, "FI_ENOTCONN", CompletionStatus::kRetryExcErr},
      {FI_ECONNRESET, "FI_ECONNRESET", CompletionStatus::kRetryExcErr},
      {FI_ECONNREFUSED, "FI_ECONNREFUSED", CompletionStatus::kRetryExcErr},
      {FI_ECONNABORTED, "FI_ECONNABORTED", CompletionStatus::kRetryExcErr},
      {FI_EHOSTUNREACH, "FI_EHOSTUNREACH", CompletionStatus::kRetryExcErr},
      {FI_ENETUNREACH, "FI_ENETUNREACH", CompletionStatus::kRetryExcErr},
      {FI_ENETDOWN, "FI_ENETDOWN", CompletionStatus::kRetryExcErr},
      {EPIPE, "EPIPE", CompletionStatus::kRetryExcErr},
      {FI_EREMOTEIO, "FI_EREMOTEIO", CompletionStatus::kRemOpErr},
      {FI_EINVAL, "FI_EINVAL", CompletionStatus::kLocQpOpErr},
      {FI_EOPNOTSUPP, "FI_EOPNOTSUPP", CompletionStatus::kRemInvReqErr},
      {FI_EFAULT, "FI_EFAULT", CompletionStatus::kLocProtErr},
      {FI_EOVERRUN, "FI_EOVERRUN", CompletionStatus::kFatalErr},
      {FI_EIO, "FI_EIO", CompletionStatus::kGeneralErr},
      {FI_ENOMEM, "FI_ENOMEM", CompletionStatus::kGeneralErr},
      {FI_EOTHER, "FI_EOTHER", CompletionStatus::kGeneralErr},
      {FI_ENODATA, "FI_ENODATA", CompletionStatus::kGeneralErr},
      {FI_EAGAIN, "FI_EAGAIN", CompletionStatus::kGeneralErr},
      {FI_ENOSYS, "FI_ENOSYS", CompletionStatus::kGeneralErr},
      {FI_EBUSY, "FI_EBUSY", CompletionStatus::kGeneralErr},
      {FI_ENOENT, "FI_ENOENT", CompletionStatus::kGeneralErr},
      {FI_ETOOSMALL, "FI_ETOOSMALL", CompletionStatus::kGeneralErr},
      {FI_EBADFLAGS, "FI_EBADFLAGS", CompletionStatus::kGeneralErr},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    CHECK(completion_status_from_ofi_error(row.code) == row.status);
    CHECK(ofi_error_name(row.code) == row.name);
  }
}

TEST_CASE("An unknown libfabric error is a general error, never success", "[unit]") {
  CHECK(completion_status_from_ofi_error(99999) == CompletionStatus::kGeneralErr);
  CHECK(ofi_error_name(99999) == "FI_E(unnamed)");
}
#endif
