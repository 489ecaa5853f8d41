// Ring collectives over real transports: N ranks in N threads, each with its own device and
// endpoints, as N agents would hold them.
#include "faultline/protocols/collective/ring.hpp"

#include <catch2/catch.hpp>
#include <numeric>

#include "every_rank.hpp"
#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using namespace faultline::protocols::collective;
using faultline::Status;
using faultline::testing::require_all_ok;
using faultline::transports::Target;

namespace {

// N ranks: rank i's to_next is connected to rank i+1's from_prev.
struct RingFixture {
  std::vector<std::unique_ptr<faultline::transports::Device>> devices;
  std::vector<std::unique_ptr<faultline::transports::Endpoint>> to_next;
  std::vector<std::unique_ptr<faultline::transports::Endpoint>> from_prev;
  std::vector<std::unique_ptr<Ring>> rings;

  RingFixture(const Target& target, size_t size, RingOptions options = {}) {
    faultline::transports::EndpointConfig config;
    config.send_depth = 64;
    config.recv_depth = 64;
    for (size_t i = 0; i < size; ++i) {
      devices.push_back(faultline::testing::open_device(target));
      auto next = devices.back()->create_endpoint(config);
      auto prev = devices.back()->create_endpoint(config);
      REQUIRE_OK(next);
      REQUIRE_OK(prev);
      to_next.push_back(std::move(next).value());
      from_prev.push_back(std::move(prev).value());
    }
    for (size_t i = 0; i < size; ++i) {
      auto& next_prev = *from_prev[(i + 1) % size];
      REQUIRE_OK(to_next[i]->connect(next_prev.address()));
      REQUIRE_OK(next_prev.connect(to_next[i]->address()));
    }
    for (size_t i = 0; i < size; ++i) {
      auto ring = Ring::create({*devices[i], *to_next[i], *from_prev[i], i, size}, options);
      REQUIRE_OK(ring);
      rings.push_back(std::move(ring).value());
    }
  }

  template <typename Work>
  std::vector<Status> on_every_rank(Work work) {
    return faultline::testing::on_every_rank(rings.size(), work);
  }
};

}  // namespace

TEST_CASE("allreduce of float32 and int32 sums exactly over rings of 2, 3 and 4",
          "[integration][ofi]") {
  for (const auto& target : {faultline::testing::ofi_tcp(), faultline::testing::ofi_shm()}) {
    for (size_t size : {2U, 3U, 4U}) {
      CAPTURE(target.label(), size);
      RingFixture ring(target, size, {.chunk_bytes = 4096});
      const size_t elements = 10007;  // not a multiple of the ring size or the chunk
      std::vector<std::vector<int32_t>> ints(size, std::vector<int32_t>(elements));
      std::vector<std::vector<float>> floats(size, std::vector<float>(elements));
      std::vector<int32_t> int_sum(elements, 0);
      std::vector<float> float_sum(elements, 0);
      for (size_t r = 0; r < size; ++r) {
        for (size_t e = 0; e < elements; ++e) {
          ints[r][e] = static_cast<int32_t>(e * 31 + r * 7) - 1000;
          floats[r][e] = static_cast<float>((e % 97) + r);  // exact in float32
          int_sum[e] += ints[r][e];
          float_sum[e] += floats[r][e];
        }
      }
      require_all_ok(ring.on_every_rank([&](size_t r) {
        return ring.rings[r]->allreduce(std::as_writable_bytes(std::span(ints[r])),
                                        DataType::kInt32);
      }));
      require_all_ok(ring.on_every_rank([&](size_t r) {
        return ring.rings[r]->allreduce(std::as_writable_bytes(std::span(floats[r])),
                                        DataType::kFloat32);
      }));
      for (size_t r = 0; r < size; ++r) {
        CHECK(ints[r] == int_sum);
        CHECK(floats[r] == float_sum);
        CHECK(ring.rings[r]->stats().most_receives_in_flight <= 8);
      }
    }
  }
}

TEST_CASE("allreduce of float16, allgather and broadcast over a ring of 3", "[integration][ofi]") {
  RingFixture ring(faultline::testing::ofi_tcp(), 3, {.chunk_bytes = 1000});
  const size_t elements = 3001;
  std::vector<std::vector<uint16_t>> halves(3, std::vector<uint16_t>(elements));
  for (size_t r = 0; r < 3; ++r)
    for (size_t e = 0; e < elements; ++e)
      halves[r][e] = float_to_half(static_cast<float>(e % 16 + r));
  require_all_ok(ring.on_every_rank([&](size_t r) {
    return ring.rings[r]->allreduce(std::as_writable_bytes(std::span(halves[r])),
                                    DataType::kFloat16);
  }));
  for (size_t e = 0; e < elements; ++e) {
    CAPTURE(e);
    REQUIRE(half_to_float(halves[0][e]) == static_cast<float>(3 * (e % 16) + 3));
    REQUIRE(halves[1][e] == halves[0][e]);
    REQUIRE(halves[2][e] == halves[0][e]);
  }

  // allgather: rank r fills its own segment with r + 1
  std::vector<std::vector<int32_t>> gathered(3, std::vector<int32_t>(1000, 0));
  for (size_t r = 0; r < 3; ++r) {
    const auto [begin, end] = ring.rings[r]->segment(4000, DataType::kInt32, r);
    for (size_t b = begin / 4; b < end / 4; ++b) gathered[r][b] = static_cast<int32_t>(r + 1);
  }
  require_all_ok(ring.on_every_rank([&](size_t r) {
    return ring.rings[r]->allgather(std::as_writable_bytes(std::span(gathered[r])),
                                    DataType::kInt32);
  }));
  for (size_t r = 0; r < 3; ++r) {
    CHECK(gathered[r] == gathered[0]);
    CHECK(std::count(gathered[r].begin(), gathered[r].end(), 0) == 0);
  }

  // broadcast from rank 1
  std::vector<std::vector<std::byte>> data(3, std::vector<std::byte>(5000));
  faultline::transports::fill_pattern(data[1].data(), data[1].size(), 42);
  require_all_ok(
      ring.on_every_rank([&](size_t r) { return ring.rings[r]->broadcast(data[r], 1); }));
  CHECK(data[0] == data[1]);
  CHECK(data[2] == data[1]);
}

TEST_CASE("chunked exchange of non-aligned sizes lands every byte and never over-posts",
          "[integration][ofi]") {
  RingFixture ring(faultline::testing::ofi_shm(), 2,
                   {.chunk_bytes = 4096, .max_recvs_in_flight = 4});
  for (size_t bytes : {size_t{4}, size_t{28 * 1024 - 1}, size_t{28 * 1024}, size_t{28 * 1024 + 1},
                       size_t{(1 << 20) + 3}}) {
    CAPTURE(bytes);
    std::vector<std::vector<std::byte>> out(2, std::vector<std::byte>(bytes));
    std::vector<std::vector<std::byte>> in(2, std::vector<std::byte>(bytes));
    for (size_t r = 0; r < 2; ++r)
      faultline::transports::fill_pattern(out[r].data(), bytes, static_cast<unsigned>(r + 1));
    require_all_ok(
        ring.on_every_rank([&](size_t r) { return ring.rings[r]->exchange(out[r], in[r]); }));
    CHECK(in[0] == out[1]);
    CHECK(in[1] == out[0]);
  }
  for (size_t r = 0; r < 2; ++r) CHECK(ring.rings[r]->stats().most_receives_in_flight <= 4);
}

TEST_CASE("allreduce of 16 MiB of float32 over 4 ranks on shm gives the right sum",
          "[integration][ofi][slow]") {
  RingFixture ring(faultline::testing::ofi_shm(), 4, {.chunk_bytes = 256 * 1024});
  const size_t elements = (16u << 20) / 4;
  std::vector<std::vector<float>> data(4, std::vector<float>(elements));
  for (size_t r = 0; r < 4; ++r)
    for (size_t e = 0; e < elements; ++e) data[r][e] = static_cast<float>((e + r) % 1024);
  require_all_ok(ring.on_every_rank([&](size_t r) {
    return ring.rings[r]->allreduce(std::as_writable_bytes(std::span(data[r])), DataType::kFloat32);
  }));
  for (size_t e = 0; e < elements; e += 1) {
    float expected = 0;
    for (size_t r = 0; r < 4; ++r) expected += static_cast<float>((e + r) % 1024);
    if (data[3][e] != expected || data[0][e] != expected) {
      FAIL("element " << e << ": " << data[0][e] << " / " << data[3][e] << ", expected "
                      << expected);
    }
  }
}

TEST_CASE("allreduce of float32 over a ring of 3 on verbs", "[integration][verbs]") {
  RingFixture ring(faultline::testing::verbs_device(), 3, {.chunk_bytes = 4096});
  const size_t elements = 100003;
  std::vector<std::vector<float>> data(3, std::vector<float>(elements));
  for (size_t r = 0; r < 3; ++r)
    for (size_t e = 0; e < elements; ++e) data[r][e] = static_cast<float>((e * 3 + r) % 512);
  require_all_ok(ring.on_every_rank([&](size_t r) {
    return ring.rings[r]->allreduce(std::as_writable_bytes(std::span(data[r])), DataType::kFloat32);
  }));
  for (size_t e = 0; e < elements; ++e) {
    float expected = 0;
    for (size_t r = 0; r < 3; ++r) expected += static_cast<float>((e * 3 + r) % 512);
    if (data[0][e] != expected || data[2][e] != expected)
      FAIL("element " << e << ": " << data[0][e] << ", expected " << expected);
  }
}
