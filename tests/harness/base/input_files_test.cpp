// Every command that reads a JSON file a user names, given what is not such a file (hostile
// round 4): nesting that overflowed a stack, a FIFO that hung it, /dev/zero that grew its
// memory until bad_alloc, a folder, a number where text goes. Each is exit 2 naming the file,
// at once, before anything runs.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "../harness_test_paths.hpp"
#include "support/run_command.hpp"

using faultline::testing::run_command;
using faultline::testing::TempDir;
namespace fs = std::filesystem;

namespace {

struct Hostile {
  std::string what;
  std::string text;  ///< the file's content; empty for the kinds made otherwise
};

// Makes `path` one of the hostile kinds.
void make(const std::string& kind, const std::string& text, const std::string& path) {
  if (kind == "a FIFO") {
    REQUIRE(mkfifo(path.c_str(), 0600) == 0);
  } else if (kind == "a link to /dev/zero") {
    fs::create_symlink("/dev/zero", path);
  } else if (kind == "a folder") {
    fs::create_directories(path);
  } else {
    std::ofstream(path) << text;
  }
}

}  // namespace

TEST_CASE("each file a command reads that is not a JSON file is exit 2 naming it, at once",
          "[integration][ofi]") {
  const std::vector<Hostile> kinds = {
      {"200,000 levels", std::string(200000, '[')},
      {"a key twice", R"({"name": "x", "name": "y"})"},
      {"numbers where text goes", R"({"name": 7, "roles": 1, "limits": "x", "endpoint": 3})"},
      {"2 MiB of spaces", std::string(size_t{2} << 20, ' ')},
      {"a FIFO", ""},
      {"a link to /dev/zero", ""},
      {"a folder", ""}};
  // Each command with FILE where the hostile file goes, and the folder it must be in when the
  // command takes a folder of files (a profile directory, scenario folders).
  const std::string devices = std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/devices";
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"devices --transport ofi --provider shm --compare-profile FILE", "x.json"},
      {"port-check --report-dir DIR/r --profile-dir DIR --profile x -- true", "x.json"},
      {"port-check --report-dir DIR/r --profile-dir DIR --profile hip --enforce x -- true",
       "x.json"},
      {"diagnose --report-dir DIR/r --limits FILE --profile hns_roce-hip09", "x.json"},
      {"sut run --report-dir DIR/r DIR", "x.json"},
      {"agent --coordinator 127.0.0.1:1 --sut-scenarios DIR", "x.json"},
      {"validate FILE", "x.json"},
      {"sut exec --report-dir DIR/r --plan FILE -- true", "x.json"}};
  for (const auto& [command, name] : commands) {
    for (const auto& kind : kinds) {
      CAPTURE(command, kind.what);
      TempDir dir;
      if (command.find("--enforce") != std::string::npos)
        fs::copy_file(devices + "/hns_roce-hip09.json", dir.path() + "/hip.json");
      const std::string file = dir.path() + "/" + name;
      make(kind.what, kind.text, file);
      std::string line = command;
      for (const auto& [from, to] : {std::pair{"FILE", file}, std::pair{"DIR", dir.path()}})
        for (auto at = line.find(from); at != std::string::npos; at = line.find(from, at + 1))
          line.replace(at, std::string(from).size(), to);
      const auto started = std::chrono::steady_clock::now();
      const auto run = run_command("cd " + dir.path() + " && FAULTLINE_TOKEN=t timeout 60 " +
                                   kFaultline + " " + line);
      INFO(run.out << run.err);
      CHECK(run.exit_code == 2);
      CHECK_THAT(run.err + run.out, Catch::Contains(file));
      CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
    }
  }
}
