#pragma once

#include <string>

#include "faultline/core/status.hpp"

namespace faultline::reports {

/// Replaces `path` with `content` atomically: writes a temporary file in the same directory,
/// flushes it to disk, and renames it over `path`. A reader (or a run killed half-way) sees
/// the old file or the new one, never a torn one. Creates missing parent directories.
Status write_file_atomically(const std::string& path, const std::string& content);

}  // namespace faultline::reports
