#include "faultline/reports/owned_directory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace faultline::reports {

namespace {

Error not_owned(const std::string& path, const std::string& what, uid_t owner) {
  return Error{ErrorCode::kInvalidArgument, path + " is " + what + " of uid " +
                                                std::to_string(owner) + ", not of this user (uid " +
                                                std::to_string(geteuid()) +
                                                "): faultline writes only into folders of its own"}
      .with_hint("give a folder of your own (--report-dir), or remove that one");
}

}  // namespace

Status make_owned_directory(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return errno_error("mkdir", error.value(), "creating " + directory);
  const uid_t self = geteuid();
  struct stat link {};
  if (::lstat(directory.c_str(), &link) != 0) return errno_error("lstat", errno, directory);
  if (S_ISLNK(link.st_mode) && link.st_uid != self && link.st_uid != 0)
    return not_owned(directory, "a symbolic link", link.st_uid);
  struct stat folder {};
  if (::stat(directory.c_str(), &folder) != 0) return errno_error("stat", errno, directory);
  if (!S_ISDIR(folder.st_mode))
    return Error{ErrorCode::kInvalidArgument, directory + " is not a directory"};
  if (folder.st_uid != self) return not_owned(directory, "a folder", folder.st_uid);
  return {};
}

}  // namespace faultline::reports
