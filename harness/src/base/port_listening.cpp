// Whether a program listens yet, read from the kernel's socket tables.
#include "faultline/harness/base/port_listening.hpp"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace faultline::harness {
namespace {

constexpr const char* kListenState = "0A";  // TCP_LISTEN, as /proc/net/tcp prints it

bool table_has_listener(const std::string& path, uint16_t port) {
  std::ifstream table(path);
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot;
    std::string local;
    std::string remote;
    std::string state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos || state != kListenState) continue;
    unsigned value = 0;
    const char* first = local.data() + colon + 1;
    const char* last = local.data() + local.size();
    if (std::from_chars(first, last, value, 16).ptr == last && value == port) return true;
  }
  return false;
}

// Gone or a zombie: it will not listen any more.
bool has_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const auto name_end = text.rfind(')');
  return name_end == std::string::npos || name_end + 2 >= text.size() ||
         text[name_end + 2] == 'Z' || text[name_end + 2] == 'X';
}

// An rdma_cm listener on `port` (rping -s, rdma_server, StepMesh's van listen through rdma_cm,
// not a socket): a cm_id in state LISTEN bound to that port, as the RDMA netlink's resource
// table shows it (`rdma resource show cm_id`: "... state LISTEN ... src-addr A.B.C.D:PORT").
// Only where an RDMA device is.
bool rdma_cm_listening(uint16_t port) {
  std::error_code error;
  if (std::filesystem::is_empty("/sys/class/infiniband", error) || error) return false;
  FILE* table = popen("rdma resource show cm_id 2>/dev/null", "r");
  if (table == nullptr) return false;
  const std::string bound = ":" + std::to_string(port) + " ";
  bool listening = false;
  char line[1024];
  while (std::fgets(line, sizeof line, table) != nullptr) {
    const std::string text = std::string(line) + " ";
    listening = listening || (text.find("state LISTEN ") != std::string::npos &&
                              text.find(bound) != std::string::npos);
  }
  pclose(table);
  return listening;
}

}  // namespace

bool port_listening(pid_t pid, uint16_t port) {
  const std::string net = "/proc/" + std::to_string(pid) + "/net/";
  return table_has_listener(net + "tcp", port) || table_has_listener(net + "tcp6", port) ||
         rdma_cm_listening(port);
}

bool wait_until_listening(pid_t pid, const std::string& port_text,
                          std::chrono::steady_clock::time_point until) {
  uint16_t port = 0;
  const char* last = port_text.data() + port_text.size();
  const auto parsed = std::from_chars(port_text.data(), last, port);
  if (parsed.ec != std::errc() || parsed.ptr != last || port == 0) return false;
  while (true) {
    if (port_listening(pid, port)) return true;
    if (has_ended(pid) || std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace faultline::harness
