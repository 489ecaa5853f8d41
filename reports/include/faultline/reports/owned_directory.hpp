#pragma once

#include <string>

#include "faultline/core/status.hpp"

namespace faultline::reports {

/// Makes `directory` (with its missing parents) and checks that it is this user's own: a
/// directory owned by the effective user, reached through no symbolic link another user owns.
/// A folder another user made, or a link planted in its place, is refused with kInvalidArgument
/// naming its owner: writing there would follow what they put in it (a root run truncating a
/// file of their choosing).
Status make_owned_directory(const std::string& directory);

}  // namespace faultline::reports
