// The built-in scenarios' completion wait over a real transport (libfabric tcp): a receive that
// completes ahead of the send the side is waiting for is kept for its own wait, not taken for
// the send's failure (rxe completes the peer's next ping before the ACK of this side's pong).
#include "scenario/builtin_steps.hpp"

#include <catch2/catch.hpp>
#include <thread>

#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using namespace faultline;
using namespace faultline::transports;
using faultline::harness::expect_completion;
using faultline::harness::FirstContact;
using faultline::testing::ofi_tcp;
using faultline::testing::TransportPair;
using namespace std::chrono_literals;

TEST_CASE("a built-in side's send wait keeps a receive that completed first for the receive wait",
          "[integration][ofi]") {
  TransportPair pair(ofi_tcp());
  auto a_tx = pair.buffer_a(64);
  auto a_rx = pair.buffer_a(64);
  auto b_tx = pair.buffer_b(64);
  auto b_rx = pair.buffer_b(64);
  const Segment into_a = a_rx.whole();
  const Segment into_b = b_rx.whole();
  REQUIRE_OK(pair.a().post_recv({1, {&into_a, 1}}));
  REQUIRE_OK(pair.b().post_recv({2, {&into_b, 1}}));
  const Segment from_b = b_tx.segment(0, 64);
  REQUIRE_OK(pair.b().post_send({.wr_id = 3, .op = Opcode::kSend, .segments = {&from_b, 1}}));
  // B's send progressed by B alone (the pair's own wait would poll A and keep its receive).
  Completion sent;
  std::thread sends_from_b([&] { (void)pair.b().poll({&sent, 1}, 10s); });
  FirstContact first;
  std::deque<Completion> held;
  // No send of A's is posted: its wait finds only the receive, holds it and runs out of time.
  auto no_send = expect_completion(pair.a(), first, Opcode::kSend, 0, 1s, held);
  REQUIRE(no_send.has_value());
  CHECK(no_send->verdict == Verdict::kFail);
  CHECK_THAT(no_send->observed, Catch::StartsWith("no completion within 1000 ms"));
  sends_from_b.join();
  INFO(sent.describe());
  CHECK(sent.ok());
  REQUIRE(held.size() == 1);

  // A's send now: its wait succeeds, and the receive's wait takes the held receive.
  const Segment from_a = a_tx.segment(0, 64);
  REQUIRE_OK(pair.a().post_send({.wr_id = 4, .op = Opcode::kSend, .segments = {&from_a, 1}}));
  CHECK_FALSE(expect_completion(pair.a(), first, Opcode::kSend, 0, 10s, held).has_value());
  CHECK_FALSE(expect_completion(pair.a(), first, Opcode::kRecv, 64, 10s, held).has_value());
  CHECK(held.empty());
  CHECK(pair.wait_b().ok());  // B's receive of A's send
}
