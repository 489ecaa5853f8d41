// faultline bench: faultline's own data path and control plane, measured the way the reference
// tools measure theirs (ci/bench puts them side by side).
#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/bench/allreduce.hpp"
#include "faultline/harness/bench/bandwidth.hpp"
#include "faultline/harness/bench/bench_table.hpp"
#include "faultline/harness/bench/control_plane.hpp"
#include "faultline/harness/bench/pingpong.hpp"
#include "faultline/harness/devices/device_listing.hpp"
#include "options/commands.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

using nlohmann::json;

// The allreduce's algorithm as the table's header names it.
std::string algorithm_label(protocols::collective::AllreduceAlgorithm algorithm) {
  if (algorithm != protocols::collective::AllreduceAlgorithm::kAuto)
    return std::string(to_string(algorithm));
  return "recursive doubling up to " +
         std::to_string(protocols::collective::kDoublingUpToBytes / 1024) + " KiB, ring above";
}

// How a subcommand's sizes were given: a list (-s), every power of two (-a, as perftest), or
// a range (-b, -e, -f, as nccl-tests).
struct SizeChoice {
  bool all = false;
  std::optional<size_t> min_bytes;
  std::optional<size_t> max_bytes;
  double factor = 2;

  // The sizes to measure, or a usage error naming the conflict.
  Status apply(std::vector<size_t>& sizes, bool sizes_given) const {
    const bool range = min_bytes || max_bytes;
    if (all + range + sizes_given > 1)
      return Error{ErrorCode::kInvalidArgument,
                   "give sizes one way: -s/--sizes, -a/--all or -b/-e/-f, not two"};
    if (all) {
      sizes.clear();
      for (size_t size = 2; size <= (size_t{1} << 23); size *= 2) sizes.push_back(size);
    } else if (range) {
      const size_t low = min_bytes.value_or(8);
      const size_t high = max_bytes.value_or(low);
      if (low == 0 || high < low || !(factor > 1))
        return Error{ErrorCode::kInvalidArgument,
                     "-b " + std::to_string(low) + " -e " + std::to_string(high) + " -f " +
                         std::to_string(factor) + ": expected 0 < b <= e and f > 1"};
      sizes.clear();
      for (double size = static_cast<double>(low); size <= static_cast<double>(high) + 0.5;
           size *= factor) {
        if (sizes.empty() || static_cast<size_t>(size) != sizes.back())
          sizes.push_back(static_cast<size_t>(size));
        if (sizes.size() > 256)
          return Error{ErrorCode::kInvalidArgument, "-b/-e/-f give more than 256 sizes"};
      }
    }
    return {};
  }
};

struct BenchCommand {
  transports::Target target;
  bool json_output = false;
  harness::bench::PingpongOptions pingpong;
  harness::bench::BandwidthOptions bandwidth;
  harness::bench::AllreduceOptions allreduce;
  std::string allreduce_algorithm = "auto";  ///< --algorithm, checked by CLI11
  harness::bench::ControlPlaneOptions control;
  std::map<std::string, SizeChoice> size_choices;  // by subcommand
  std::map<std::string, CLI::Option*> size_options;
  bool server = false;
  std::string client;
  uint16_t port = 18515;
  int server_wait_seconds = 300;

  // The header every JSON result starts with.
  json header(const std::string& benchmark) const {
    return {{"benchmark", benchmark},
            {"transport", target.transport},
            {"provider", target.provider},
            {"device", target.device}};
  }

  // Checks the target, runs `measure`, prints its error or its result.
  template <typename Measure, typename Print>
  int run(const std::string& name, Measure measure, Print print) {
    target = target.with_defaults();
    if (auto chosen = choose_sizes(name); !chosen.ok()) {
      std::cerr << "faultline bench " << name << ": " << chosen.error().describe() << "\n";
      return harness::kExitUsage;
    }
    if (auto present = harness::list_devices({target.transport, target.provider, target.device});
        !present.ok()) {
      std::cerr << "faultline bench " << name << ": " << present.error().describe_with_hint()
                << "\n";
      return harness::kExitUsage;
    }
    auto result = measure();
    if (!result.ok()) {
      std::cerr << "faultline bench " << name << ": " << result.error().describe_with_hint()
                << "\n";
      return result.error().code == ErrorCode::kInvalidArgument ? harness::kExitUsage
                                                                : harness::kExitHarnessError;
    }
    print(result.value());
    return harness::kExitPass;
  }

  Status choose_sizes(const std::string& name) {
    auto choice = size_choices.find(name);
    if (choice == size_choices.end()) return {};
    const bool given = size_options.at(name)->count() > 0;
    if (name == "pingpong") return choice->second.apply(pingpong.sizes, given);
    if (name == "bandwidth") return choice->second.apply(bandwidth.sizes, given);
    return choice->second.apply(allreduce.sizes, given);
  }

  std::string target_label() const {
    return target.transport + (target.provider.empty() ? "" : "/" + target.provider) +
           (target.device.empty() ? "" : " " + target.device);
  }

  int run_pingpong() {
    if (server || !client.empty()) {
      const char* conflict = server && !client.empty() ? "--server and --client"
                             : pingpong.two_processes  ? "--two-processes with --server or --client"
                             : pingpong.op != "send"   ? "--op write with --server or --client"
                                                       : nullptr;
      if (conflict != nullptr) {
        std::cerr << "faultline bench pingpong: " << conflict
                  << " cannot go together (two nodes measure send/recv)\n";
        return harness::kExitUsage;
      }
    }
    if (server) {
      return run(
          "pingpong",
          [&] {
            pingpong.target = target;
            std::cout << "# faultline bench pingpong --server: waiting for one client on port "
                      << port << std::endl;
            return harness::bench::run_pingpong_server(pingpong, port,
                                                       std::chrono::seconds(server_wait_seconds));
          },
          [&](const harness::bench::PingpongOptions& served) {
            std::cout << "# served " << served.sizes.size() << " size(s) x "
                      << served.warmup + served.iterations << " round trips on "
                      << served.target.text() << "\n";
          });
    }
    return run(
        "pingpong",
        [&] {
          pingpong.target = target;
          return client.empty() ? harness::bench::run_pingpong(pingpong)
                                : harness::bench::run_pingpong_client(pingpong, client, port);
        },
        [&](const std::vector<harness::bench::LatencyRow>& rows) { print_latency(rows); });
  }

  // A benchmark's rows: as JSON (its header, `fields`, the rows, each with `row_fields`) or as
  // the reference tool's table under `title`.
  template <typename Row>
  void print_rows(const std::string& benchmark, const json& fields, const json& row_fields,
                  const std::string& title, const std::vector<Row>& rows) const {
    if (json_output) {
      json out = header(benchmark);
      out.update(fields);
      out["rows"] = harness::bench::rows_json(rows);
      for (auto& row : out["rows"]) row.update(row_fields);
      std::cout << out.dump(2) << "\n";
      return;
    }
    std::cout << title;
    harness::bench::print_table(std::cout, rows);
  }

  void print_latency(const std::vector<harness::bench::LatencyRow>& rows) const {
    json fields = {{"op", pingpong.op},
                   {"idle_decorator", pingpong.idle_decorator},
                   {"two_processes", pingpong.two_processes}};
    if (!client.empty()) fields["server"] = client;
    print_rows("pingpong", fields, json::object(),
               "# faultline bench pingpong: " + target_label() + ", " +
                   (pingpong.op == "write" ? "RDMA write with immediate" : "send/recv") +
                   (pingpong.idle_decorator ? ", idle fault decorator in the path" : "") +
                   (pingpong.two_processes ? ", responder in a process of its own" : "") +
                   (client.empty() ? "" : ", responder on " + client) +
                   "\n# one-way latency = half the round trip\n",
               rows);
  }

  int run_bandwidth() {
    return run(
        "bandwidth",
        [&] {
          bandwidth.target = target;
          return harness::bench::run_bandwidth(bandwidth);
        },
        [&](const std::vector<harness::bench::BandwidthRow>& rows) {
          print_rows("bandwidth",
                     {{"op", bandwidth.op},
                      {"window", bandwidth.window},
                      {"idle_decorator", bandwidth.idle_decorator}},
                     json::object(),
                     "# faultline bench bandwidth: " + target_label() + ", " +
                         (bandwidth.op == "write" ? "RDMA write" : "send/recv") + ", window " +
                         std::to_string(bandwidth.window) +
                         (bandwidth.idle_decorator ? ", idle fault decorator in the path" : "") +
                         "\n",
                     rows);
        });
  }

  // Like nccl-tests: #wrong per row, then the average bus bandwidth; a wrong sum anywhere is a
  // conformance failure (exit 1), the rows still measured and printed.
  int run_allreduce() {
    uint64_t wrong = 0;
    const int code = run(
        "allreduce",
        [&] {
          allreduce.target = target;
          allreduce.algorithm =
              *protocols::collective::allreduce_algorithm_from_string(allreduce_algorithm);
          return harness::bench::run_allreduce(allreduce);
        },
        [&](const std::vector<harness::bench::AllreduceRow>& rows) {
          print_rows(
              "allreduce",
              {{"algorithm", to_string(allreduce.algorithm)},
               {"doubling_up_to_bytes", protocols::collective::kDoublingUpToBytes}},
              {{"status_checked", allreduce.check_status}},
              "# faultline bench allreduce: " + target_label() + ", " +
                  algorithm_label(allreduce.algorithm) + ", float32 sum, every result checked, " +
                  (allreduce.check_status ? "every completion's status checked"
                                          : "completion status NOT checked (--no-status-check)") +
                  "\n",
              rows);
          double busbw = 0;
          for (const auto& row : rows) {
            wrong += row.wrong;
            busbw += row.busbw_gb_s / static_cast<double>(rows.size());
          }
          if (json_output) return;
          std::cout << "# Out of bounds values : " << wrong << (wrong == 0 ? " OK" : " FAILED")
                    << "\n# Avg bus bandwidth    : " << std::fixed << std::setprecision(3) << busbw
                    << "\n";
        });
    return code == harness::kExitPass && wrong > 0 ? harness::kExitConformanceFailure : code;
  }

  int run_control() {
    return run(
        "control",
        [&] {
          control.target = target;
          return harness::bench::run_control_plane(control);
        },
        [&](const harness::bench::ControlPlaneResult& result) {
          if (json_output) {
            json out = header("control");
            out["barriers"] = control.barriers;
            out["repetitions"] = control.repetitions;
            out["step_round_trip_ms"] = result.step_round_trip_ms;
            out["run_without_steps_ms"] = result.run_without_steps_ms;
            out["agents"] = result.agents;
            out["join_seconds"] = result.join_seconds;
            out["pair_runs"] = result.pair_runs;
            out["all_pairs_seconds"] = result.all_pairs_seconds;
            std::cout << out.dump(2) << "\n";
            return;
          }
          std::cout << "# faultline bench control: coordinator on 127.0.0.1, agents on "
                    << target_label() << ", scenarios without traffic\n"
                    << std::fixed << std::setprecision(3) << "step round trip (median of "
                    << control.repetitions << ", child -> agent -> coordinator -> agent -> child): "
                    << result.step_round_trip_ms << " ms\n"
                    << "a run of one barrier, start to verdict: " << result.run_without_steps_ms
                    << " ms\n"
                    << result.agents << " agents joined in " << result.join_seconds << " s; "
                    << result.pair_runs << " pair runs scheduled over all pairs in "
                    << result.all_pairs_seconds << " s\n";
        });
  }
};

void add_target_options(CLI::App* command, transports::Target& target, bool& json_output) {
  command->add_option("--transport", target.transport, "Transport (ofi, verbs)")
      ->capture_default_str();
  command->add_option("--provider", target.provider, "ofi provider (tcp, shm, ...)");
  command->add_option("-d,--device", target.device, "Device (lo, eth0, shm, rxe0, ...)");
  command->add_flag("--json", json_output, "Print JSON instead of the table");
}

// Sizes and counts, with perftest's and nccl-tests' short flags beside the long ones.
template <typename Options>
void add_measure_options(CLI::App* command, Options& options, BenchCommand& bench) {
  const std::string name = command->get_name();
  SizeChoice& choice = bench.size_choices[name];
  bench.size_options[name] =
      command->add_option("-s,--sizes", options.sizes, "Message sizes in bytes (128K, 1M work)")
          ->delimiter(',')
          ->transform(CLI::AsSizeValue(false))
          ->capture_default_str();
  command->add_flag("-a,--all", choice.all, "Every power of two from 2 B to 8 MiB (perftest -a)");
  command->add_option("-b,--min-bytes", choice.min_bytes, "Smallest size of a range (nccl-tests)")
      ->transform(CLI::AsSizeValue(false));
  command->add_option("-e,--max-bytes", choice.max_bytes, "Largest size of a range")
      ->transform(CLI::AsSizeValue(false));
  command->add_option("-f,--step-factor", choice.factor, "Each size of a range times this")
      ->capture_default_str();
  command->add_option("-n,--iterations", options.iterations, "Measured operations per size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--warmup", options.warmup, "Operations before measuring, per size")
      ->capture_default_str();
}

// `bench pingpong` and its options.
CLI::App* add_pingpong(CLI::App* bench, BenchCommand& command) {
  CLI::App* p = bench->add_subcommand(
      "pingpong", "One-way latency (half the round trip): min, median, mean, p99 per size");
  auto& pingpong = command.pingpong;
  add_measure_options(p, pingpong, command);
  p->add_option("--op", pingpong.op, "send (send/recv) or write (RDMA write with immediate)")
      ->check(CLI::IsMember({"send", "write"}))
      ->capture_default_str();
  p->add_flag("--two-processes", pingpong.two_processes,
              "The responder in a process of its own, as fi_pingpong's server (send only)");
  p->add_flag("--idle-decorator", pingpong.idle_decorator,
              "Put the fault decorator in the path with a fault that never fires");
  p->add_option("-I,--inline-size", pingpong.max_inline,
                "Send inline only up to this many bytes (0: never; default: the device's limit)");
  p->add_option("-x,--gid-index", pingpong.gid_index, "verbs: the GID index to use");
  p->add_option("-D,--duration", pingpong.duration_seconds,
                "Measure each size for this many seconds instead of -n iterations")
      ->check(seconds_up_to(3600));
  p->add_flag("--server", command.server,
              "Answer one client on another node (bench pingpong --client HOST), then exit");
  p->add_option("--client", command.client,
                "Measure against `bench pingpong --server` on HOST (its device: --device, else "
                "the one toward HOST)");
  p->add_option("-p,--port", command.port, "TCP port of --server and --client")
      ->capture_default_str();
  p->add_option("--server-wait", command.server_wait_seconds,
                "Seconds --server waits for its client")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  p->footer(
      "Examples:\n  faultline bench pingpong\n"
      "  faultline bench pingpong --provider shm -s 64 -n 1000\n"
      "  faultline bench pingpong --provider shm -a\n"
      "  faultline bench pingpong -b 8 -e 64K -f 4\n"
      "  faultline bench pingpong --transport verbs -d rxe0 --op write --json\n"
      "  node A: faultline bench pingpong --server     node B: faultline bench pingpong --client "
      "A\n"
      "Exit codes: 0 measured, 2 a usage error, 3 the transfer failed.");
  return p;
}

// `bench bandwidth` and its options.
CLI::App* add_bandwidth(CLI::App* bench, BenchCommand& command) {
  CLI::App* b = bench->add_subcommand(
      "bandwidth", "Streaming bandwidth with a window of outstanding operations");
  auto& bandwidth = command.bandwidth;
  add_measure_options(b, bandwidth, command);
  b->add_option("--op", bandwidth.op, "write (RDMA write) or send (send/recv)")
      ->check(CLI::IsMember({"send", "write"}))
      ->capture_default_str();
  b->add_option("--window", bandwidth.window, "Operations outstanding at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  b->add_flag("--idle-decorator", bandwidth.idle_decorator,
              "Put the fault decorator in the path with a fault that never fires");
  b->footer(
      "Examples:\n  faultline bench bandwidth --provider shm\n"
      "  faultline bench bandwidth --transport verbs --device rxe0 --sizes 65536 --window 128\n"
      "Exit codes: 0 measured, 2 a usage error, 3 the transfer failed.");
  return b;
}

// `bench allreduce` and its options.
// The names --algorithm takes: each of protocols::collective::kAllreduceAlgorithms.
std::vector<std::string> allreduce_algorithm_names() {
  std::vector<std::string> names;
  names.reserve(protocols::collective::kAllreduceAlgorithms.size());
  for (auto algorithm : protocols::collective::kAllreduceAlgorithms)
    names.emplace_back(protocols::collective::to_string(algorithm));
  return names;
}

CLI::App* add_allreduce(CLI::App* bench, BenchCommand& command) {
  CLI::App* a = bench->add_subcommand(
      "allreduce", "Allreduce bus bandwidth over 2 to 4 ranks (nccl-tests' busbw)");
  auto& allreduce = command.allreduce;
  add_measure_options(a, allreduce, command);
  a->add_option("--ranks", allreduce.ranks, "Numbers of ranks")
      ->delimiter(',')
      ->capture_default_str();
  a->add_option("--algorithm", command.allreduce_algorithm,
                "ring; recursive_doubling; halving_doubling; or auto: recursive doubling up to " +
                    std::to_string(protocols::collective::kDoublingUpToBytes / 1024) +
                    " KiB, the ring above")
      ->check(CLI::IsMember(allreduce_algorithm_names()))
      ->capture_default_str();
  a->add_option("--chunk-bytes", allreduce.chunk_bytes, "Chunk size of each exchange")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  a->add_flag_callback(
      "--no-status-check", [&allreduce] { allreduce.check_status = false; },
      "Take every completion as a success without reading its status: run beside the default to "
      "measure what checking costs (the sum is still checked)");
  a->footer(
      "Examples:\n  faultline bench allreduce --provider shm --ranks 2,4 --sizes 16777216\n"
      "  faultline bench allreduce --provider tcp --ranks 4 --sizes 65536 --algorithm ring\n"
      "  faultline bench allreduce --provider shm --ranks 2 --sizes 16384 --no-status-check\n"
      "Exit codes: 0 measured, 2 a usage error, 3 the collective failed.");
  return a;
}

// `bench control` and its options.
CLI::App* add_control(CLI::App* bench, BenchCommand& command) {
  CLI::App* c = bench->add_subcommand(
      "control", "Coordinator round trip per step, and all-pairs scheduling of local agents");
  auto& control = command.control;
  c->add_option("--agents", control.agents, "Agents for the all-pairs schedule")
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
  c->add_option("--barriers", control.barriers, "Steps of the timed scenario")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--repetitions", control.repetitions, "Repetitions of the step measurement")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->footer(
      "Examples:\n  faultline bench control\n  faultline bench control --agents 4 --json\n"
      "Exit codes: 0 measured, 2 a usage error, 3 a run failed.");
  return c;
}

}  // namespace

void add_bench_command(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<BenchCommand>();
  CLI::App* bench = app.add_subcommand("bench",
                                       "Measure faultline's data path and control plane (ci/bench "
                                       "compares them with fi_pingpong and perftest)");
  bench->require_subcommand(1);
  bench->footer(
      "Examples:\n  faultline bench pingpong --provider shm\n"
      "  faultline bench bandwidth --transport verbs --device rxe0 --sizes 65536\n"
      "  faultline bench allreduce --provider tcp --ranks 2,4 --sizes 16384\n"
      "  faultline bench control\n"
      "Each subcommand's --help has its options and examples.");
  const auto bind = [&run, command](CLI::App* sub, int (BenchCommand::*measure)()) {
    add_target_options(sub, command->target, command->json_output);
    sub->callback(
        [&run, command, measure] { run = [command, measure] { return ((*command).*measure)(); }; });
  };
  bind(add_pingpong(bench, *command), &BenchCommand::run_pingpong);
  bind(add_bandwidth(bench, *command), &BenchCommand::run_bandwidth);
  bind(add_allreduce(bench, *command), &BenchCommand::run_allreduce);
  bind(add_control(bench, *command), &BenchCommand::run_control);
}

}  // namespace faultline::cli
