// The completion tracker every engine shares, over a real tcp pair: the three checks and the
// generation that tells an engine made after a reconnect from the old one.
#include "faultline/protocols/completion_tracker.hpp"

#include <catch2/catch.hpp>

#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using faultline::protocols::CompletionTracker;
using faultline::transports::Completion;

namespace {

Completion completion_of(uint64_t wr_id, uint32_t qp) {
  Completion completion;
  completion.wr_id = wr_id;
  completion.qp_num = qp;
  return completion;
}

std::string refusal(const faultline::Result<CompletionTracker::Work>& work) {
  return work.ok() ? "accepted" : work.error().message;
}

}  // namespace

TEST_CASE("the tracker gives back what a completion completes, once", "[unit][ofi]") {
  faultline::testing::TransportPair pair(faultline::testing::ofi_tcp());
  CompletionTracker tracker("rank 0", pair.a());
  const uint32_t qp = pair.a().qp_num();
  const uint64_t first = tracker.post({7, 3});
  const uint64_t second = tracker.post({7, 3});  // the same slot posted again
  CHECK(first != second);
  CHECK(tracker.outstanding() == 2);

  auto work = tracker.complete(completion_of(first, qp));
  REQUIRE_OK(work);
  CHECK(work.value().kind == 7);
  CHECK(work.value().index == 3);
  // Expect: a second completion of the same request is stale or a duplicate, not slot 3 again.
  CHECK_THAT(refusal(tracker.complete(completion_of(first, qp))),
             Catch::StartsWith("rank 0: a stale or duplicate completion"));
  CHECK_THAT(refusal(tracker.complete(completion_of(first + 100, qp))),
             Catch::Contains("never posted"));
  // Expect: another qp's completion is left over from before a reconnect.
  CHECK_THAT(refusal(tracker.complete(completion_of(second, qp + 1))),
             Catch::Contains("not this endpoint's qp") &&
                 Catch::Contains("left over from before a reconnect"));
  REQUIRE_OK(tracker.complete(completion_of(second, qp)));
  CHECK(tracker.outstanding() == 0);
}

TEST_CASE("an engine made after a reconnect refuses the old engine's ids on the same qp",
          "[unit][ofi]") {
  faultline::testing::TransportPair pair(faultline::testing::ofi_tcp());
  CompletionTracker old_engine("rank 1", pair.a());
  CompletionTracker new_engine("rank 1", pair.a());  // same qp number, as a reused one would be
  const uint64_t stale = old_engine.post({1, 0});
  new_engine.post({1, 0});
  CHECK_FALSE(new_engine.owns(stale));
  CHECK_THAT(refusal(new_engine.complete(completion_of(stale, pair.a().qp_num()))),
             Catch::Contains("another generation") && Catch::Contains("reused qp number"));
  // Giving up on an exchange makes its late completions stale.
  const uint64_t late = new_engine.post({1, 1});
  new_engine.abandon_outstanding();
  CHECK_THAT(refusal(new_engine.complete(completion_of(late, pair.a().qp_num()))),
             Catch::Contains("stale or duplicate"));
}
