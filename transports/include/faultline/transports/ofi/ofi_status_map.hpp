#pragma once

#include <string_view>

#include "faultline/transports/completion_status.hpp"

namespace faultline::transports::ofi {

/// Maps a libfabric completion error (the positive `fi_cq_err_entry.err` value, an FI_E* or
/// errno code) to the generic status. The native value is kept beside it in the Completion.
CompletionStatus completion_status_from_ofi_error(int fi_errno);

/// The libfabric error a provider reports for `status` (the first row of the table that maps
/// to it; FI_EIO for a status no row gives): what an injected error completion carries.
int ofi_error_for_status(CompletionStatus status);

/// "FI_ETRUNC", "FI_EACCES", ...; the numeric value as text for codes without a name.
std::string_view ofi_error_name(int fi_errno);

}  // namespace faultline::transports::ofi
