// A Gloo program for faultline's tests: PyTorch's CPU collectives (Debian's libgloo-dev) over
// its ibverbs transport, as a user runs them. Each rank joins through a FileStore folder, then
// runs ROUNDS allreduces (sum) of COUNT floats with the chosen algorithm (or broadcasts of
// rank 0's floats), and checks every element of every result against what it must be:
//   "allreduce ok: rank 0, 4 rounds of 4096 floats (ring)"
// or names the first wrong element and exits 1. A Gloo error in this thread is printed
// ("gloo error: ...") and exits 1; one in Gloo's device thread aborts the process, as Gloo does.
// Every exit, a passing one too, leaves Gloo's objects as they are (std::exit): Gloo's
// teardown races its own device thread (measured in the lane: after a clean halving_doubling
// run, "sendPending_ == 0. 1 vs 0. Destructing buffer expecting completions" aborted rank 0
// in 2 runs of 2; destroying a context while the peer still writes into its buffers can
// SIGSEGV), which would hide what the program said and fault no data path.
// STORE_DIR is made when missing (both ranks name the same one).
// Usage: sut_gloo_allreduce DEVICE GID_INDEX RANK SIZE STORE_DIR
//              [ring|ring_chunked|halving_doubling|broadcast [COUNT [ROUNDS [TIMEOUT_MS]]]]
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/ibverbs/device.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace {

std::unique_ptr<gloo::Algorithm> algorithm(const std::string& name,
                                           const std::shared_ptr<gloo::Context>& context,
                                           float* data, int count) {
  const std::vector<float*> inputs = {data};
  if (name == "ring") return std::make_unique<gloo::AllreduceRing<float>>(context, inputs, count);
  if (name == "ring_chunked")
    return std::make_unique<gloo::AllreduceRingChunked<float>>(context, inputs, count);
  if (name == "halving_doubling")
    return std::make_unique<gloo::AllreduceHalvingDoubling<float>>(context, inputs, count);
  if (name == "broadcast")
    return std::make_unique<gloo::BroadcastOneToAll<float>>(context, inputs, count, 0, 0);
  return nullptr;
}

// Element i of round r on rank k holds (k + 1) * (i % 7 + r + 1): the sum over ranks is known,
// and a broadcast gives every rank rank 0's.
float input(int rank, int round, int i) { return float(rank + 1) * float(i % 7 + round + 1); }
float expected(const std::string& name, int size, int round, int i) {
  if (name == "broadcast") return input(0, round, i);
  return float(size * (size + 1) / 2) * float(i % 7 + round + 1);
}

// Runs one step of Gloo's; an error is said and ends the process at once (see above).
template <typename Step>
void or_exit(const Step& step) {
  try {
    step();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gloo error: %s\n", error.what());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: %s DEVICE GID_INDEX RANK SIZE STORE_DIR [ALGORITHM [COUNT [ROUNDS "
                 "[TIMEOUT_MS]]]]\n",
                 argv[0]);
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int rank = std::atoi(argv[3]);
  const int size = std::atoi(argv[4]);
  const std::string name = argc > 6 ? argv[6] : "ring";
  const int count = argc > 7 ? std::atoi(argv[7]) : 4096;
  const int rounds = argc > 8 ? std::atoi(argv[8]) : 4;
  try {
    gloo::transport::ibverbs::attr attr{argv[1], 1, std::atoi(argv[2])};
    auto device = gloo::transport::ibverbs::CreateDevice(attr);
    ::mkdir(argv[5], 0700);  // the other rank may have made it first
    gloo::rendezvous::FileStore store(argv[5]);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    if (argc > 9) context->setTimeout(std::chrono::milliseconds(std::atoi(argv[9])));
    or_exit([&] { context->connectFullMesh(store, device); });
    std::vector<float> data(static_cast<size_t>(count));
    std::unique_ptr<gloo::Algorithm> allreduce;
    or_exit([&] { allreduce = algorithm(name, context, data.data(), count); });
    if (!allreduce) {
      std::fprintf(stderr,
                   "unknown algorithm %s: ring, ring_chunked, halving_doubling or broadcast\n",
                   name.c_str());
      return 2;
    }
    for (int round = 0; round < rounds; ++round) {
      for (int i = 0; i < count; ++i) data[size_t(i)] = input(rank, round, i);
      or_exit([&] { allreduce->run(); });
      for (int i = 0; i < count; ++i) {
        if (data[size_t(i)] != expected(name, size, round, i)) {
          std::printf("allreduce wrong: rank %d, round %d, element %d: %g, expected %g\n", rank,
                      round, i, double(data[size_t(i)]), double(expected(name, size, round, i)));
          std::exit(1);
        }
      }
    }
    std::printf("allreduce ok: rank %d, %d rounds of %d floats (%s)\n", rank, rounds, count,
                name.c_str());
    std::exit(0);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gloo error: %s\n", error.what());
    return 1;
  }
}
