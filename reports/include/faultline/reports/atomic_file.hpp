#pragma once

#include <string>

#include "faultline/core/status.hpp"

namespace faultline::reports {

/// Replaces `path` with `content` atomically: writes a temporary file in the same directory,
/// flushes it to disk, and renames it over `path`. A reader (or a run killed half-way) sees
/// the old file or the new one, never a torn one. Creates missing parent directories.
Status write_file_atomically(const std::string& path, const std::string& content);

/// Why `path` may not be a file faultline writes where a user pointed it, or "" when it may:
/// it must be a new name or a regular file (never a symbolic link, a FIFO, a device or a
/// folder), in an existing folder that this user or root owns, and a folder others may write
/// in must be sticky (/tmp) with the file, if there, this user's own. "-" is standard output.
std::string user_file_problem(const std::string& path);

/// Writes `content` to a file a user named (-o, --port-file, --save-profile): checked by
/// user_file_problem, then replaced atomically; "-" writes standard output. A link, FIFO or
/// device found there is refused (kInvalidArgument naming it), never followed or replaced.
Status write_user_file(const std::string& path, const std::string& content);

}  // namespace faultline::reports
