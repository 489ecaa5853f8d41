// A StepMesh job of the project's own: one program for each of its three roles (DMLC_ROLE:
// scheduler, server, worker). The worker pushes every key of every round with a value pattern
// of its round and key, pulls it back, and checks every value; the server keeps what was
// pushed and checks it too. Over zmq (DMLC_ENABLE_RDMA unset) or StepMesh's RDMA van
// (DMLC_ENABLE_RDMA=ibverbs). The line a checker waits for:
//   stepmesh push/pull: 20 rounds x 4 keys x 1024 bytes pulled back, every value right
// Usage: stepmesh_push_pull [--rounds N] [--keys K] [--values V] [--no-lens]
//   --no-lens: push keys and values only, as StepMesh's own AFTensorWorker::ZPush_ sends
//   (the server of the Makefile's default build requires three segments).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ps/internal/cpu_backend.h"
#include "ps/kv_app.h"

namespace {

struct Options {
  int rounds = 20;
  int keys = 4;
  int values = 1024;
  bool lens = true;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto number = [&](int& into) {
      if (i + 1 >= argc || (into = std::atoi(argv[++i])) <= 0) {
        std::fprintf(stderr, "stepmesh_push_pull: %s takes a number above 0\n", arg.c_str());
        std::exit(2);
      }
    };
    if (arg == "--rounds") {
      number(options.rounds);
    } else if (arg == "--keys") {
      number(options.keys);
    } else if (arg == "--values") {
      number(options.values);
    } else if (arg == "--no-lens") {
      options.lens = false;
    } else {
      std::fprintf(stderr, "stepmesh_push_pull: unknown argument %s\n", arg.c_str());
      std::exit(2);
    }
  }
  return options;
}

// Values are bytes, as StepMesh's own tensors travel: its RDMA van takes a request's value
// count for its length in bytes (a pull of 256 floats aborts at rdma_transport.h:676,
// "val len256 data len 1024").
using Byte = char;

// The byte pushed at `index` of `key` in `round`.
Byte pattern(int round, ps::Key key, int index) {
  return static_cast<Byte>((round * 131 + static_cast<int>(key) * 17 + index) % 251);
}

// StepMesh's zmq van leaves a pull's values in the worker's private per-request store: its
// callback, which copies them out, never runs (KVWorker::Process compares the expected count
// with num_servers() - 1). Read there through an explicit instantiation, which may name a
// private member; the RDMA van writes them into the caller's buffer instead.
using PulledStore = std::unordered_map<int, std::vector<ps::KVPairs<Byte>>>;
PulledStore& pulled_store(ps::KVWorker<Byte>& worker);
template <PulledStore ps::KVWorker<Byte>::*Store>
struct PulledStoreOf {
  friend PulledStore& pulled_store(ps::KVWorker<Byte>& worker) { return worker.*Store; }
};
template struct PulledStoreOf<&ps::KVWorker<Byte>::recv_kvs_>;

// Keeps each key's pushed values, checked against the pattern; a pull answers with them.
class Store {
 public:
  void operator()(const ps::KVMeta& meta, const ps::KVPairs<Byte>& request,
                  ps::KVServer<Byte>* server) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (meta.push) {
      keep(request);
      server->Response(meta);
      return;
    }
    // The answer's buffers stay alive after the response: the RDMA van may still read them.
    ps::KVPairs<Byte>& answer = answers_[request.keys.empty() ? 0 : request.keys[0]];
    answer.keys.CopyFrom(request.keys);
    std::vector<Byte> values;
    std::vector<int> lens;
    for (const ps::Key key : request.keys) {
      const std::vector<Byte>& kept = kept_[key];
      values.insert(values.end(), kept.begin(), kept.end());
      lens.push_back(static_cast<int>(kept.size()));
    }
    answer.vals.CopyFrom(values.data(), values.size());
    answer.lens.CopyFrom(lens.data(), lens.size());
    server->Response(meta, answer);
  }

 private:
  void keep(const ps::KVPairs<Byte>& request) {
    const size_t keys = request.keys.size();
    size_t at = 0;
    for (size_t k = 0; k < keys; ++k) {
      const size_t length =
          request.lens.empty() ? request.vals.size() / keys : static_cast<size_t>(request.lens[k]);
      const ps::Key key = request.keys[k];
      const int round = rounds_[key]++;
      std::vector<Byte>& kept = kept_[key];
      kept.assign(request.vals.data() + at, request.vals.data() + at + length);
      for (size_t i = 0; i < length; ++i) {
        if (kept[i] != pattern(round, key, static_cast<int>(i))) {
          std::fprintf(stderr,
                       "stepmesh push/pull: WRONG value pushed: round %d key %llu [%zu]: got "
                       "%d, pushed %d\n",
                       round, static_cast<unsigned long long>(key), i, kept[i],
                       pattern(round, key, static_cast<int>(i)));
          std::exit(1);
        }
      }
      at += length;
    }
  }

  std::mutex mutex_;
  std::map<ps::Key, std::vector<Byte>> kept_;
  std::map<ps::Key, int> rounds_;
  std::map<ps::Key, ps::KVPairs<Byte>> answers_;
};

// Pulls `key` back into `into` and returns its values.
std::vector<Byte> pull(ps::KVWorker<Byte>& worker, ps::Key key, ps::SArray<Byte>& into) {
  ps::SArray<ps::Key> keys(1, key);
  std::fill(into.begin(), into.end(), Byte{-1});
  const int request = worker.ZPull(keys, &into);
  worker.Wait(request);
  if (worker.is_worker_zpull_) return {into.begin(), into.end()};
  std::vector<Byte> pulled;
  for (const auto& part : pulled_store(worker)[request])
    pulled.insert(pulled.end(), part.vals.begin(), part.vals.end());
  worker.EraseRecvKvs(request);
  return pulled;
}

int run_worker(const Options& options) {
  ps::KVWorker<Byte> worker(0, 0);
  // Each key's buffers live for the whole job, as a trainer's tensors do: StepMesh's RDMA van
  // registers a buffer by its address once and keeps the registration.
  const size_t size = static_cast<size_t>(options.values);
  std::vector<ps::SArray<Byte>> pushed;
  std::vector<ps::SArray<Byte>> pulled_into;
  for (int key = 0; key < options.keys; ++key) {  // SArray copies share: one each
    pushed.emplace_back(size);
    pulled_into.emplace_back(size);
  }
  for (int round = 0; round < options.rounds; ++round) {
    for (ps::Key key = 0; key < static_cast<ps::Key>(options.keys); ++key) {
      ps::SArray<ps::Key> keys(1, key);
      ps::SArray<Byte>& values = pushed[key];
      for (int i = 0; i < options.values; ++i) values[i] = pattern(round, key, i);
      ps::SArray<int> lens;
      if (options.lens) lens = ps::SArray<int>(1, options.values);
      worker.Wait(worker.ZPush(keys, values, lens));
      const std::vector<Byte> pulled = pull(worker, key, pulled_into[key]);
      if (pulled.size() != static_cast<size_t>(options.values)) {
        std::fprintf(stderr,
                     "stepmesh push/pull: WRONG length pulled: round %d key %llu: %zu "
                     "values, pushed %d\n",
                     round, static_cast<unsigned long long>(key), pulled.size(), options.values);
        return 1;
      }
      for (int i = 0; i < options.values; ++i) {
        if (pulled[i] != pattern(round, key, i)) {
          std::fprintf(stderr,
                       "stepmesh push/pull: WRONG value pulled: round %d key %llu [%d]: got %d, "
                       "pushed %d\n",
                       round, static_cast<unsigned long long>(key), i, pulled[i],
                       pattern(round, key, i));
          return 1;
        }
      }
    }
  }
  std::printf(
      "stepmesh push/pull: %d rounds x %d keys x %d bytes pulled back, every value "
      "right\n",
      options.rounds, options.keys, options.values);
  std::fflush(stdout);
  return 0;
}

std::atomic<bool> finalized{false};
constexpr int kWorkerFinalizeSeconds = 5;
constexpr int kServerFinalizeSeconds = 600;

// StepMesh's Finalize (a barrier of all ranks, then the van's teardown) over the RDMA van
// sometimes never returns on the worker: measured in the lane, a worker that had checked every
// value waited in RDMAVan::RecvMsg until its 60 s deadline, after the barrier (the server's
// and the scheduler's Finalize returned). Like the Gloo program, this one is about the
// exchange, not the teardown: a worker leaves after 5 s of it, saying so. The server and the
// scheduler enter Finalize at once and wait there for the worker's whole run: they wait as
// long as `seconds` (a job's deadline ends them before).
[[noreturn]] void finalize(ps::Postoffice* office, int status, int seconds) {
  std::thread([office] {
    office->Finalize(0, true);
    finalized.store(true);
  }).detach();
  for (int waited = 0; waited < seconds * 10 && !finalized.load(); ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!finalized.load()) {
    std::printf(
        "stepmesh push/pull: Finalize still waiting after %d s (StepMesh's teardown); "
        "leaving without it\n",
        seconds);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const char* role_name = std::getenv("DMLC_ROLE");
  const std::string role_text = role_name != nullptr ? role_name : "";
  ps::Node::Role role;
  if (role_text == "scheduler") {
    role = ps::Node::SCHEDULER;
  } else if (role_text == "server") {
    role = ps::Node::SERVER;
  } else if (role_text == "worker") {
    role = ps::Node::WORKER;
  } else {
    std::fprintf(stderr, "stepmesh_push_pull: DMLC_ROLE is scheduler, server or worker\n");
    return 2;
  }
  // What StepMesh's StartPS does, without its libtorch-only headers (ps/ps.h).
  ps::Backend::Register("CPU", new ps::CpuBackend());
  if (role != ps::Node::SCHEDULER) ps::Backend::Get()->SetDevice(0);
  ps::Postoffice::Init(role);
  ps::Postoffice* office =
      role == ps::Node::WORKER ? ps::Postoffice::GetWorker(0) : ps::Postoffice::GetServer(0);
  if (role == ps::Node::SERVER) {
    // Its handler is in place before the start's barrier lets the worker push: made after it
    // (as StepMesh's own tests do), a server held off the CPU for 5 s aborts "timeout (5 sec)
    // to wait App 0 customer 0 ready" at the first push (measured on two busy cores).
    ps::KVServer<Byte> server(0);
    auto store = std::make_shared<Store>();
    server.set_request_handle(
        [store](const ps::KVMeta& meta, const ps::KVPairs<Byte>& request,
                ps::KVServer<Byte>* answering) { (*store)(meta, request, answering); });
    office->Start(0, role, 0, true, argv[0]);
    finalize(office, 0, kServerFinalizeSeconds);
  }
  office->Start(0, role, role == ps::Node::SCHEDULER ? -1 : 0, true, argv[0]);
  int status = 0;
  if (role == ps::Node::WORKER) status = run_worker(options);
  finalize(office, status,
           role == ps::Node::WORKER ? kWorkerFinalizeSeconds : kServerFinalizeSeconds);
}
