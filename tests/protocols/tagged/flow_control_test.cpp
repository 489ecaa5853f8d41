// Credits and the bounded eager queue: nothing is sent without a free slot on the peer, the
// last credit is kept for returning credits, and a full queue refuses rather than grows.
#include "faultline/protocols/tagged/flow_control.hpp"

#include <catch2/catch.hpp>

using namespace faultline::protocols::tagged;

TEST_CASE("data frames stop one credit short, a credit return may use the last", "[unit]") {
  CreditWindow window(4, 4);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(window.can_send());
    window.consume();
  }
  CHECK(window.credits() == 1);
  CHECK_FALSE(window.can_send());
  CHECK(window.can_return());
  window.consume();
  CHECK_FALSE(window.can_return());
  window.returned(3);
  CHECK(window.can_send());
  CHECK(window.credits() == 3);
}

TEST_CASE("reposted slots are told once, and a frame of their own is due at half", "[unit]") {
  CreditWindow window(8, 8);
  CHECK_FALSE(window.return_due());
  for (int i = 0; i < 3; ++i) window.reposted();
  CHECK_FALSE(window.return_due());
  window.reposted();
  CHECK(window.return_due());  // 4 of 8
  CHECK(window.take_returns() == 4);
  CHECK(window.take_returns() == 0);
  CHECK_FALSE(window.return_due());
}

TEST_CASE("a side out of data credits always has a return due on the other side", "[unit]") {
  // Whatever the slot count, a side stuck at one credit has R-1 frames unreturned, and the
  // other side, having reposted them, owes at least half its slots: it will send a return.
  for (size_t slots : {2U, 3U, 8U, 32U}) {
    CreditWindow sender(slots, slots);
    CreditWindow receiver(slots, slots);
    while (sender.can_send()) {
      sender.consume();
      receiver.reposted();
    }
    CAPTURE(slots);
    CHECK(receiver.return_due());
    REQUIRE(receiver.can_return());
    sender.returned(receiver.take_returns());
    CHECK(sender.can_send());
  }
}

TEST_CASE("the eager queue holds its capacity in order and refuses more", "[unit]") {
  EagerQueue queue(2);
  QueuedEager first{1, {5, 0}, {std::byte{1}}};
  QueuedEager second{2, {5, 1}, {std::byte{2}}};
  QueuedEager third{3, {5, 2}, {std::byte{3}}};
  REQUIRE(queue.push(first));
  REQUIRE(queue.push(second));
  CHECK(queue.full());
  CHECK_FALSE(queue.push(third));
  CHECK(third.payload.size() == 1);  // refused, not consumed
  CHECK(queue.front().request == 1);
  queue.pop();
  CHECK(queue.front().request == 2);
  CHECK(queue.push(third));
  CHECK(queue.high_water() == 2);
  CHECK(queue.size() == 2);
}
