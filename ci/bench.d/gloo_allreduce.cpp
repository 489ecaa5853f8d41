// The Gloo reference for `faultline bench allreduce` in ci/bench: Gloo's allreduce (PyTorch's
// CPU collectives, Debian's libgloo-dev) of float32 sums, measured and checked the way
// mpi_allreduce.c and faultline measure theirs. Rank r's element e is r + e % 7 (every sum
// exact in float32) and every element of every result is checked. Each operation starts after
// a barrier; its time is the slowest rank's (one max-allreduce of every rank's times at the
// end), and rank 0 prints the median over the iterations, one JSON line per size:
//   {"ranks": 4, "bytes": 65536, "iterations": 20, "median_us": 812.4, "algorithm": "ring"}
// The ranks are processes that meet in STORE_DIR (a FileStore; an empty folder per launch),
// there at the start and again at the end.
// TRANSPORT: tcp (on 127.0.0.1) or ibverbs:DEVICE:GID_INDEX.
// ALGORITHM: ring, ring_chunked, halving_doubling or bcube (Gloo's own classes).
// Usage: gloo_allreduce TRANSPORT RANK SIZE STORE_DIR ALGORITHM ITERATIONS WARMUP BYTES...
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/ibverbs/device.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace {

std::shared_ptr<gloo::transport::Device> device_for(const std::string& transport) {
  if (transport == "tcp") return gloo::transport::tcp::CreateDevice("127.0.0.1");
  const auto first = transport.find(':');
  const auto second = transport.find(':', first + 1);
  if (transport.rfind("ibverbs:", 0) != 0 || second == std::string::npos) return nullptr;
  gloo::transport::ibverbs::attr attr{transport.substr(first + 1, second - first - 1), 1,
                                      std::atoi(transport.c_str() + second + 1)};
  return gloo::transport::ibverbs::CreateDevice(attr);
}

template <typename T>
std::unique_ptr<gloo::Algorithm> allreduce(const std::string& name,
                                           const std::shared_ptr<gloo::Context>& context, T* data,
                                           int count, const gloo::ReductionFunction<T>* fn) {
  const std::vector<T*> inputs = {data};
  if (name == "ring") return std::make_unique<gloo::AllreduceRing<T>>(context, inputs, count, fn);
  if (name == "ring_chunked")
    return std::make_unique<gloo::AllreduceRingChunked<T>>(context, inputs, count, fn);
  if (name == "halving_doubling")
    return std::make_unique<gloo::AllreduceHalvingDoubling<T>>(context, inputs, count, fn);
  if (name == "bcube") return std::make_unique<gloo::AllreduceBcube<T>>(context, inputs, count, fn);
  return nullptr;
}

// One size's buffers and operations.
struct Size {
  std::vector<float> data;
  std::vector<double> seconds;
  std::unique_ptr<gloo::Algorithm> op;
  std::unique_ptr<gloo::Algorithm> slowest;
};

struct Run {
  std::shared_ptr<gloo::Context> context;
  int rank;
  int size;
  std::string name;
  int iterations;
  int warmup;
};

// Measures and checks one size into `measured`; rank 0 prints its JSON line. Returns the
// exit code to leave with, 0 to go on.
int measure(const Run& run, gloo::BarrierAllToAll& barrier, long bytes, Size& measured) {
  const int count = static_cast<int>(bytes / long(sizeof(float)));
  auto& data = measured.data;
  data.resize(static_cast<size_t>(count));
  measured.op = allreduce<float>(run.name, run.context, data.data(), count,
                                 gloo::ReductionFunction<float>::sum);
  if (!measured.op) {
    std::fprintf(stderr, "gloo_allreduce: unknown algorithm %s\n", run.name.c_str());
    return 2;
  }
  auto& seconds = measured.seconds;
  const float base = float(run.size * (run.size - 1)) / 2.0F;
  for (int i = 0; i < run.warmup + run.iterations; ++i) {
    for (int e = 0; e < count; ++e) data[size_t(e)] = float(run.rank + e % 7);
    barrier.run();
    const auto started = std::chrono::steady_clock::now();
    measured.op->run();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    if (i >= run.warmup) seconds.push_back(took.count());
    for (int e = 0; e < count; ++e) {
      const float expected = base + float(run.size * (e % 7));
      if (data[size_t(e)] != expected) {
        std::fprintf(stderr, "gloo_allreduce: rank %d: element %d is %g, expected %g\n", run.rank,
                     e, double(data[size_t(e)]), double(expected));
        return 3;
      }
    }
  }
  // Each iteration's time is its slowest rank's.
  measured.slowest = allreduce<double>("ring", run.context, seconds.data(), run.iterations,
                                       gloo::ReductionFunction<double>::max);
  measured.slowest->run();
  std::sort(seconds.begin(), seconds.end());
  if (run.rank == 0)
    std::printf(
        "{\"ranks\": %d, \"bytes\": %ld, \"iterations\": %d, \"median_us\": %.1f, "
        "\"algorithm\": \"%s\"}\n",
        run.size, bytes, run.iterations, seconds[size_t(run.iterations / 2)] * 1e6,
        run.name.c_str());
  std::fflush(stdout);
  return 0;
}

// Nobody leaves before every rank has measured, and the ranks meet for that in the store, not
// over the transport: with a barrier of Gloo's own as the last message, a rank through it
// could exit before that message had left. Over tcp Gloo then failed the barrier of a rank
// still in it ("Connection closed by peer"); over ibverbs (rxe0 in the lane) rank 0 stayed in
// it after its peers had exited.
void wait_for_every_rank(gloo::rendezvous::Store& store, int rank, int size) {
  store.set("finished-" + std::to_string(rank), {'1'});
  std::vector<std::string> finished(static_cast<size_t>(size));
  for (int peer = 0; peer < size; ++peer)
    finished[size_t(peer)] = "finished-" + std::to_string(peer);
  store.wait(finished);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 9) {
    std::fprintf(stderr,
                 "usage: %s TRANSPORT RANK SIZE STORE_DIR ALGORITHM ITERATIONS WARMUP BYTES...\n",
                 argv[0]);
    return 2;
  }
  const std::string transport = argv[1];
  Run run{nullptr, std::atoi(argv[2]), std::atoi(argv[3]),
          argv[5], std::atoi(argv[6]), std::atoi(argv[7])};
  try {
    auto device = device_for(transport);
    if (!device) {
      std::fprintf(stderr, "gloo_allreduce: transport %s: expected tcp or ibverbs:DEVICE:GID\n",
                   transport.c_str());
      return 2;
    }
    gloo::rendezvous::FileStore store(argv[4]);
    auto context = std::make_shared<gloo::rendezvous::Context>(run.rank, run.size);
    context->connectFullMesh(store, device);
    run.context = context;
    gloo::BarrierAllToAll barrier(context);
    // Every size's operations and their memory stay until the exit: a Gloo ibverbs buffer
    // destroyed with a send not yet completed aborts the process ("Destructing buffer
    // expecting completions"), and an operation's last send may still be in flight.
    std::vector<std::unique_ptr<Size>> sizes;
    for (int arg = 8; arg < argc; ++arg) {
      const int code = measure(run, barrier, std::atol(argv[arg]),
                               *sizes.emplace_back(std::make_unique<Size>()));
      if (code != 0) return code;
    }
    wait_for_every_rank(store, run.rank, run.size);
    // Gloo's teardown races its device thread (tests/sut/gloo_allreduce.cpp): leave as is.
    std::exit(0);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gloo_allreduce: gloo error: %s\n", error.what());
    return 1;
  }
}
