// A program's fault space from its `site` events: the families each site takes, points and
// their ids, and an id read back into the same fault.
#include <catch2/catch.hpp>

#include "faultline/harness/sut/fault_points.hpp"

using faultline::harness::sut::call_sites;
using faultline::harness::sut::CallSite;
using faultline::harness::sut::families_at;
using faultline::harness::sut::point_at;
using faultline::harness::sut::point_from_id;
using nlohmann::json;

namespace {

json site_event(const std::string& call, const std::string& side, const std::string& opcode,
                uint64_t count) {
  json event = {
      {"event", "site"},
      {"site", "3fa2c1d09e8b7a65"},
      {"call", call},
      {"side", side},
      {"layer", "verbs"},
      {"outermost", true},
      {"count", count},
      {"inline_posts", 0},
      {"max_segments", 1},
      {"rank", 1},
      {"stack",
       {"/usr/lib/libgloo.so(ibv_post_send) inlined",
        "/usr/lib/libgloo.so(gloo::transport::ibverbs::Pair::send(gloo::transport::ibverbs::"
        "Buffer*, unsigned long, unsigned long, unsigned long))+0x1f4",
        "/usr/bin/app+0x1234"}}};
  if (!opcode.empty()) event["opcode"] = opcode;
  return event;
}

}  // namespace

TEST_CASE("fault points: site events become call sites, named by the program's first function",
          "[unit][sut]") {
  const auto sites = call_sites({site_event("ibv_post_send", "send", "RDMA_WRITE_WITH_IMM", 12),
                                 json{{"event", "fault"}}, json("not an object"),
                                 site_event("ibv_poll_cq", "recv", "RECV", 0)});
  REQUIRE(sites.size() == 1);  // a site never seen (count 0) and other events are left out
  CHECK(sites[0].rank == 1);
  // Past verbs.h's inline ibv_post_send, without its parameters.
  CHECK(sites[0].label() == "gloo::transport::ibverbs::Pair::send+0x1f4");
  // An inlined function of the program's own is named, without an offset; a frame nothing
  // names by its object.
  CallSite inlined = sites[0];
  inlined.stack = {"/opt/app(fi_cq_read) inlined", "/opt/app(wait_for_completion) inlined",
                   "/opt/app(main)+0x162f"};
  CHECK(inlined.label() == "wait_for_completion");
  inlined.stack = {"/usr/lib/x86_64-linux-gnu/libmpi.so.40+0x9a3c0"};
  CHECK(inlined.label() == "libmpi.so.40+0x9a3c0");
  CHECK(sites[0].what() == "ibv_post_send RDMA_WRITE_WITH_IMM");
  CHECK_FALSE(sites[0].completes());
}

TEST_CASE("fault points: each family where it applies", "[unit][sut]") {
  const auto poll = call_sites({site_event("ibv_poll_cq", "recv", "RECV", 5)}).at(0);
  CHECK(families_at(poll) ==
        std::vector<std::string>{"status", "qp_error", "drop", "corrupt_data"});
  // A write with immediate's receive holds no data: nothing to corrupt there.
  const auto imm = call_sites({site_event("ibv_poll_cq", "recv", "RECV_RDMA_WITH_IMM", 5)}).at(0);
  CHECK(families_at(imm) == std::vector<std::string>{"status", "qp_error", "drop"});
  auto write = call_sites({site_event("ibv_post_send", "send", "RDMA_WRITE_WITH_IMM", 5)}).at(0);
  CHECK(families_at(write) ==
        std::vector<std::string>{"corrupt_data", "fail_post", "segment_fewer"});
  write.inline_posts = 2;
  CHECK(families_at(write).back() == "inline_off");
  // The ibv_wr_* API: the batch is posted (and refused) at ibv_wr_complete.
  const auto complete = call_sites({site_event("ibv_wr_complete", "send", "", 5)}).at(0);
  CHECK(families_at(complete) == std::vector<std::string>{"fail_post"});
  // libfabric: no QP to move to error; a send's bytes are not changed at the sender.
  json ofi = site_event("fi_cq_read", "recv", "RECV", 5);
  ofi["layer"] = "ofi_rxm";
  CHECK(families_at(call_sites({ofi}).at(0)) ==
        std::vector<std::string>{"status", "drop", "corrupt_data"});
}

TEST_CASE("fault points: a point's fault is filtered to its site, and its id reads back",
          "[unit][sut]") {
  const auto poll = call_sites({site_event("ibv_poll_cq", "recv", "RECV", 5)}).at(0);
  const auto point = point_at(poll, "qp_error", 3, "middle");
  CHECK(point.id == "qp_error:3fa2c1d09e8b7a65:ibv_poll_cq:recv:RECV:-:r1:n3");
  CHECK(point.fault == json{{"kind", "rewrite_status"},
                            {"status", "RETRY_EXC_ERR"},
                            {"qp_error", true},
                            {"site", "3fa2c1d09e8b7a65"},
                            {"side", "recv"},
                            {"opcode", "RECV"},
                            {"rank", 1},
                            {"nth", 3}});
  CHECK(point.name() ==
        "rank 1 gloo::transport::ibverbs::Pair::send+0x1f4 [3fa2c1d0] ibv_poll_cq RECV: "
        "qp_error (middle)");
  const auto again = point_from_id(point.id);
  REQUIRE(again.ok());
  CHECK(again->fault == point.fault);
  CHECK(again->id == point.id);
  // Post faults name the side they post on with `post`.
  const auto send = call_sites({site_event("ibv_post_send", "send", "SEND", 5)}).at(0);
  CHECK(point_at(send, "fail_post", 1, "first").fault.at("post") == "send");
  CHECK(point_at(send, "fail_post", 1, "first").fault.at("errno") == 12);
  // Inline applies to every send of the site: no occurrence.
  CHECK_FALSE(point_at(send, "inline_off", 0, "every").fault.contains("nth"));
}

TEST_CASE("fault points: a bad id says what an id looks like", "[unit][sut]") {
  for (const char* id :
       {"", "status", "status:3fa2c1d09e8b7a65:ibv_poll_cq:recv:RECV:-:r1",
        "frobnicate:3fa2c1d09e8b7a65:ibv_poll_cq:recv:RECV:-:r1:n3",
        "status:XYZ:ibv_poll_cq:recv:RECV:-:r1:n3",
        "status:3fa2c1d09e8b7a65:ibv_poll_cq:sideways:RECV:-:r1:n3",
        "status:3fa2c1d09e8b7a65:ibv_poll_cq:recv:RECV:-:r1:n0",
        "status:3fa2c1d09e8b7a65:ibv_poll_cq:recv:RECV:-:rx:n3", "limits:", "limits:hns."}) {
    const auto point = point_from_id(id);
    INFO(id);
    REQUIRE_FALSE(point.ok());
    CHECK_THAT(point.error().describe(), Catch::Contains("expected a point id"));
  }
  CHECK(point_from_id("limits:hns_roce-hip08.max_qp_wr")->target == "hns_roce-hip08.max_qp_wr");
}

TEST_CASE("fault points: one site a filter, and every id the sweep names reads back",
          "[unit][sut]") {
  // Two processes of one program with no rank to tell them apart report one site: one point
  // reaches it in both, so it is one site, with the larger count (two were two points of one
  // id, which junit's history merged).
  json first = site_event("ibv_poll_cq", "recv", "RECV", 4);
  json second = site_event("ibv_poll_cq", "recv", "RECV", 9);
  first.erase("rank");
  second.erase("rank");
  const auto sites = call_sites({first, second});
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].count == 9);
  // A rank below 0, as a launcher's variable can give, reads back from the id.
  json negative = site_event("ibv_poll_cq", "recv", "RECV", 4);
  negative["rank"] = -1;
  const auto point = point_at(call_sites({negative}).at(0), "status", 3, "middle");
  CHECK_THAT(point.id, Catch::Contains(":r-1:n3"));
  const auto back = point_from_id(point.id);
  REQUIRE(back.ok());
  CHECK(back->id == point.id);
  CHECK(back->fault == point.fault);
  CHECK_FALSE(point_from_id("status:3fa2c1d09e8b7a65:ibv_poll_cq:recv:RECV:-:r--1:n3").ok());
}
