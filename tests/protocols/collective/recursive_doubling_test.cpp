// Recursive-doubling allreduce over real transports: N ranks in N threads, each with its own
// device and an endpoint to and one from each partner, as N agents would hold them.
#include "faultline/protocols/collective/recursive_doubling.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "every_rank.hpp"
#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using namespace faultline::protocols::collective;
using faultline::Status;
using faultline::testing::require_all_ok;
using faultline::transports::Endpoint;
using faultline::transports::Target;

namespace {

// Rank i and each partner p: i's to[p] sends to p's from[i], and p's to[i] to i's from[p].
struct DoublingFixture {
  std::vector<std::unique_ptr<faultline::transports::Device>> devices;
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  std::vector<std::unique_ptr<RecursiveDoubling>> ranks;

  DoublingFixture(const Target& target, size_t size, RingOptions options = {},
                  DoublingExchange exchange = DoublingExchange::kWholeMessage) {
    faultline::transports::EndpointConfig config;
    config.send_depth = 64;
    config.recv_depth = 64;
    std::vector<std::map<size_t, Endpoint*>> to(size);
    std::vector<std::map<size_t, Endpoint*>> from(size);
    auto make = [&](size_t rank) {
      auto endpoint = devices[rank]->create_endpoint(config);
      REQUIRE_OK(endpoint);
      endpoints.push_back(std::move(endpoint).value());
      return endpoints.back().get();
    };
    for (size_t i = 0; i < size; ++i) devices.push_back(faultline::testing::open_device(target));
    for (size_t i = 0; i < size; ++i) {
      for (size_t p : doubling_partners(i, size)) {
        to[i][p] = make(i);
        from[i][p] = make(i);
      }
    }
    for (size_t i = 0; i < size; ++i) {
      for (auto [p, sender] : to[i]) {
        REQUIRE_OK(sender->connect(from[p].at(i)->address()));
        REQUIRE_OK(from[p].at(i)->connect(sender->address()));
      }
    }
    for (size_t i = 0; i < size; ++i) {
      DoublingLink link{*devices[i], {}, i, size};
      for (size_t p : doubling_partners(i, size))
        link.partners.push_back({p, *to[i][p], *from[i][p]});
      auto rank = RecursiveDoubling::create(std::move(link), options, exchange);
      REQUIRE_OK(rank);
      ranks.push_back(std::move(rank).value());
    }
  }

  template <typename Work>
  std::vector<Status> on_every_rank(Work work) {
    return faultline::testing::on_every_rank(ranks.size(), work);
  }
};

}  // namespace

TEST_CASE("doubling partners pair up both ways, log2 of the ranks each, the extra ranks once",
          "[unit]") {
  CHECK(doubling_partners(0, 1).empty());
  CHECK(doubling_partners(0, 2) == std::vector<size_t>{1});
  CHECK(doubling_partners(0, 3) == std::vector<size_t>{2, 1});
  CHECK(doubling_partners(2, 3) == std::vector<size_t>{0});
  CHECK(doubling_partners(5, 8) == std::vector<size_t>{4, 7, 1});
  for (size_t size = 2; size <= 9; ++size) {
    for (size_t rank = 0; rank < size; ++rank) {
      CAPTURE(size, rank);
      for (size_t partner : doubling_partners(rank, size)) {
        const auto theirs = doubling_partners(partner, size);
        CHECK(std::count(theirs.begin(), theirs.end(), rank) == 1);
      }
    }
  }
}

TEST_CASE("recursive doubling and halving-doubling sum float32 and int32 exactly over 2 to 5 ranks",
          "[integration][ofi]") {
  const auto exchange = GENERATE(DoublingExchange::kWholeMessage, DoublingExchange::kHalving);
  for (const auto& target : {faultline::testing::ofi_tcp(), faultline::testing::ofi_shm()}) {
    for (size_t size : {2U, 3U, 4U, 5U}) {
      CAPTURE(target.label(), size, exchange == DoublingExchange::kHalving);
      DoublingFixture doubling(target, size, {.chunk_bytes = 4096}, exchange);
      const size_t elements = 10007;  // not a multiple of the chunk
      std::vector<std::vector<int32_t>> ints(size, std::vector<int32_t>(elements));
      std::vector<std::vector<float>> floats(size, std::vector<float>(elements));
      for (size_t r = 0; r < size; ++r) {
        for (size_t e = 0; e < elements; ++e) {
          ints[r][e] = static_cast<int32_t>(e * 31 + r * 1000003);
          // Not exact in float32 sums: every rank must still end with the same bits.
          floats[r][e] = std::sin(static_cast<float>(e + 17 * r));
        }
      }
      std::vector<int32_t> int_sum(elements, 0);
      for (size_t r = 0; r < size; ++r)
        for (size_t e = 0; e < elements; ++e)
          int_sum[e] = static_cast<int32_t>(static_cast<uint32_t>(int_sum[e]) +
                                            static_cast<uint32_t>(ints[r][e]));
      std::vector<float> float_sum(elements, 0);
      for (size_t r = 0; r < size; ++r)
        for (size_t e = 0; e < elements; ++e) float_sum[e] += floats[r][e];
      require_all_ok(doubling.on_every_rank([&](size_t r) -> Status {
        FAULTLINE_RETURN_IF_ERROR(doubling.ranks[r]->allreduce(
            std::as_writable_bytes(std::span(ints[r])), DataType::kInt32));
        return doubling.ranks[r]->allreduce(std::as_writable_bytes(std::span(floats[r])),
                                            DataType::kFloat32);
      }));
      for (size_t r = 0; r < size; ++r) {
        CAPTURE(r);
        CHECK(ints[r] == int_sum);
        CHECK(floats[r] == floats[0]);
        for (size_t e = 0; e < elements; e += 997)
          CHECK(floats[r][e] == Approx(float_sum[e]).margin(1e-4));
        CHECK(doubling.ranks[r]->stats().most_receives_in_flight <= 8);
        CHECK(doubling.ranks[r]->stats().receives_beyond_expected == 0);
      }
    }
  }
}

TEST_CASE("recursive doubling refuses partner links that are not the rank's partners",
          "[integration][ofi]") {
  auto device = faultline::testing::open_device(faultline::testing::ofi_tcp());
  auto a = device->create_endpoint({});
  auto b = device->create_endpoint({});
  REQUIRE_OK(a);
  REQUIRE_OK(b);
  auto none = RecursiveDoubling::create({*device, {}, 0, 4}, {});
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().message, Catch::Contains("rank 0 of 4 needs 2 partner link(s), got 0"));
  auto wrong = RecursiveDoubling::create(
      {*device, {{3, *a.value(), *b.value()}, {2, *a.value(), *b.value()}}, 0, 4}, {});
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.error().message, Catch::Contains("partner 0 is rank 3, expected rank 1"));
}

TEST_CASE("recursive doubling over 3 ranks and halving-doubling over 4 on verbs",
          "[integration][verbs]") {
  const auto [exchange, size] = GENERATE(table<DoublingExchange, size_t>(
      {{DoublingExchange::kWholeMessage, 3}, {DoublingExchange::kHalving, 4}}));
  CAPTURE(size);
  DoublingFixture doubling(faultline::testing::verbs_device(), size, {.chunk_bytes = 4096},
                           exchange);
  const size_t elements = 20011;
  std::vector<std::vector<float>> data(size, std::vector<float>(elements));
  for (size_t r = 0; r < size; ++r)
    for (size_t e = 0; e < elements; ++e) data[r][e] = static_cast<float>((e * 3 + r) % 512);
  require_all_ok(doubling.on_every_rank([&](size_t r) {
    return doubling.ranks[r]->allreduce(std::as_writable_bytes(std::span(data[r])),
                                        DataType::kFloat32);
  }));
  for (size_t e = 0; e < elements; ++e) {
    float expected = 0;
    for (size_t r = 0; r < size; ++r) expected += static_cast<float>((e * 3 + r) % 512);
    for (size_t r = 0; r < size; ++r)
      if (data[r][e] != expected)
        FAIL("rank " << r << " element " << e << ": " << data[r][e] << ", expected " << expected);
  }
}
