// Transport conformance, data path: every registered transport and provider moves the exact
// bytes for sends, receives, gathers, scatters, inline sends, RDMA write, write with immediate
// and RDMA read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "faultline/transports/transport.hpp"
#include "support/skip.hpp"
#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"
#include "transports/conformance_cases.hpp"

namespace {

using namespace faultline;
using namespace faultline::transports;
using namespace faultline::testing;

// A sends `bytes` to B, which posted one buffer of the same size.
// Expect: both complete with SUCCESS, B's byte_len is `bytes`, the bytes arrive unchanged.
void check_send_recv(const Target& target, size_t bytes) {
  TransportPair pair(target);
  transports::RegisteredBuffer source = pair.buffer_a(std::max<size_t>(bytes, 1));
  transports::RegisteredBuffer sink = pair.buffer_b(std::max<size_t>(bytes, 1));
  fill_pattern(source.data(), bytes, 1);
  // A zero-length message carries no segment: a zero SGE length means 2 GiB on some NICs.
  Segment send_segment = source.segment(0, bytes);
  Segment recv_segment = sink.whole();
  std::span<const Segment> send_segments{&send_segment, bytes == 0 ? 0U : 1U};

  REQUIRE_OK(pair.b().post_recv({7, {&recv_segment, 1}}));
  REQUIRE_OK(pair.a().post_send({.wr_id = 9, .op = Opcode::kSend, .segments = send_segments}));
  Completion sent = pair.wait_a();
  INFO(sent.describe());
  CHECK(sent.ok());
  CHECK(sent.wr_id == 9);
  CHECK(sent.op == Opcode::kSend);
  Completion received = pair.wait_b();
  INFO(received.describe());
  CHECK(received.ok());
  CHECK(received.wr_id == 7);
  CHECK(received.op == Opcode::kRecv);
  CHECK(received.byte_len == bytes);
  CHECK(first_pattern_mismatch(sink.data(), bytes, 1) == bytes);
}

void send_recv_0(const Target& t) { check_send_recv(t, 0); }
void send_recv_1(const Target& t) { check_send_recv(t, 1); }
void send_recv_4095(const Target& t) { check_send_recv(t, 4095); }
void send_recv_4096(const Target& t) { check_send_recv(t, 4096); }
void send_recv_4097(const Target& t) { check_send_recv(t, 4097); }
void send_recv_1mib(const Target& t) { check_send_recv(t, 1 << 20); }
TRANSPORT_CONFORMANCE_CASE(send_recv_0, "send and receive 0 bytes")
TRANSPORT_CONFORMANCE_CASE(send_recv_1, "send and receive 1 byte")
TRANSPORT_CONFORMANCE_CASE(send_recv_4095, "send and receive 4095 bytes")
TRANSPORT_CONFORMANCE_CASE(send_recv_4096, "send and receive 4096 bytes")
TRANSPORT_CONFORMANCE_CASE(send_recv_4097, "send and receive 4097 bytes")
TRANSPORT_CONFORMANCE_CASE(send_recv_1mib, "send and receive 1 MiB")

// Segment i of a message of n segments: lengths differ so a misplaced segment shows.
size_t segment_length(size_t i) { return 257 * (i + 1) + 3; }

// Room for `count` segments with a gap of `gap` bytes before each.
size_t span_of_segments(size_t count, size_t gap) {
  size_t bytes = 0;
  for (size_t i = 0; i < count; ++i) bytes += gap + segment_length(i);
  return bytes;
}

// A gathers 1..max_send_sge segments from scattered places of one buffer into one send.
// Expect: B receives the segments back to back, in order.
void gather_send(const Target& target) {
  const DeviceLimits limits = limits_of(target);
  EndpointConfig config;
  config.max_send_sge = limits.max_send_sge;
  TransportPair pair(target, config);
  transports::RegisteredBuffer source = pair.buffer_a(span_of_segments(limits.max_send_sge, 100));
  transports::RegisteredBuffer sink = pair.buffer_b(span_of_segments(limits.max_send_sge, 0));
  fill_pattern(source.data(), source.length, 2);
  for (uint32_t count = 1; count <= limits.max_send_sge; ++count) {
    CAPTURE(count);
    std::vector<Segment> segments;
    std::vector<std::byte> expected;
    size_t offset = 0;
    for (size_t i = 0; i < count; ++i) {
      offset += 100;  // a gap, so contiguity would be wrong
      segments.push_back(source.segment(offset, segment_length(i)));
      expected.insert(expected.end(), source.data() + offset,
                      source.data() + offset + segment_length(i));
      offset += segment_length(i);
    }
    std::fill_n(sink.data(), sink.length, std::byte{0});
    Segment recv_segment = sink.whole();
    REQUIRE_OK(pair.b().post_recv({count, {&recv_segment, 1}}));
    REQUIRE_OK(pair.a().post_send({.wr_id = count, .op = Opcode::kSend, .segments = segments}));
    Completion sent = pair.wait_a();
    INFO(sent.describe());
    REQUIRE(sent.ok());
    Completion received = pair.wait_b();
    INFO(received.describe());
    REQUIRE(received.ok());
    REQUIRE(received.byte_len == expected.size());
    REQUIRE(std::equal(expected.begin(), expected.end(), sink.data()));
  }
}
TRANSPORT_CONFORMANCE_CASE(gather_send, "send gathers 1 to max_send_sge segments")

// B scatters one contiguous message into 1..max_recv_sge segments at scattered places.
// Expect: each segment holds its own slice of the message, gaps stay untouched.
void scatter_recv(const Target& target) {
  const DeviceLimits limits = limits_of(target);
  EndpointConfig config;
  config.max_recv_sge = limits.max_recv_sge;
  TransportPair pair(target, config);
  transports::RegisteredBuffer source = pair.buffer_a(span_of_segments(limits.max_recv_sge, 0));
  transports::RegisteredBuffer sink = pair.buffer_b(span_of_segments(limits.max_recv_sge, 64));
  fill_pattern(source.data(), source.length, 3);
  for (uint32_t count = 1; count <= limits.max_recv_sge; ++count) {
    CAPTURE(count);
    std::fill_n(sink.data(), sink.length, std::byte{0xee});
    std::vector<Segment> segments;
    std::vector<size_t> offsets;
    size_t offset = 0;
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
      offset += 64;
      offsets.push_back(offset);
      segments.push_back(sink.segment(offset, segment_length(i)));
      offset += segment_length(i);
      total += segment_length(i);
    }
    Segment send_segment = source.segment(0, total);
    REQUIRE_OK(pair.b().post_recv({count, segments}));
    REQUIRE_OK(
        pair.a().post_send({.wr_id = count, .op = Opcode::kSend, .segments = {&send_segment, 1}}));
    REQUIRE(pair.wait_a().ok());
    Completion received = pair.wait_b();
    INFO(received.describe());
    REQUIRE(received.ok());
    REQUIRE(received.byte_len == total);
    size_t consumed = 0;
    for (size_t i = 0; i < count; ++i) {
      CAPTURE(i);
      REQUIRE(std::equal(source.data() + consumed, source.data() + consumed + segment_length(i),
                         sink.data() + offsets[i]));
      REQUIRE(sink.data()[offsets[i] - 1] == std::byte{0xee});
      consumed += segment_length(i);
    }
  }
}
TRANSPORT_CONFORMANCE_CASE(scatter_recv, "receive scatters into 1 to max_recv_sge segments")

// Inline sends of 1 byte and of exactly the granted inline size, signaled and unsignaled.
// Expect: the bytes arrive; a signaled inline send completes, an unsignaled one does not.
void inline_within_limit(const Target& target) {
  const DeviceLimits limits = limits_of(target);
  if (limits.max_inline_data == 0)
    FAULTLINE_SKIP(target.label() + " has no inline path (max_inline_data 0)");
  EndpointConfig config;
  config.max_inline = std::min<uint32_t>(limits.max_inline_data, 256);
  TransportPair pair(target, config);
  transports::RegisteredBuffer source = pair.buffer_a(4096);
  transports::RegisteredBuffer sink = pair.buffer_b(4096);
  fill_pattern(source.data(), source.length, 4);
  uint64_t wr_id = 1;
  for (size_t bytes : {size_t{1}, size_t{config.max_inline}}) {
    for (bool signaled : {true, false}) {
      CAPTURE(bytes, signaled);
      std::fill_n(sink.data(), sink.length, std::byte{0});
      Segment send_segment = source.segment(0, bytes);
      Segment recv_segment = sink.whole();
      REQUIRE_OK(pair.b().post_recv({wr_id, {&recv_segment, 1}}));
      REQUIRE_OK(pair.a().post_send({.wr_id = wr_id,
                                     .op = Opcode::kSend,
                                     .segments = {&send_segment, 1},
                                     .inline_data = true,
                                     .signaled = signaled}));
      Completion received = pair.wait_b();
      INFO(received.describe());
      REQUIRE(received.ok());
      REQUIRE(received.byte_len == bytes);
      REQUIRE(first_pattern_mismatch(sink.data(), bytes, 4) == bytes);
      if (signaled) {
        Completion sent = pair.wait_a();
        REQUIRE(sent.ok());
        REQUIRE(sent.wr_id == wr_id);
      }
      ++wr_id;
    }
  }
  CHECK(pair.drain_a().empty());
}
TRANSPORT_CONFORMANCE_CASE(inline_within_limit, "inline sends within the granted limit")

// A writes 64 KiB + 5 bytes into B's registered region at an offset.
// Expect: A's write completes; the bytes land at the offset in B, nothing else changes;
// B sees no completion for a plain write.
void rdma_write(const Target& target) {
  TransportPair pair(target);
  if (!pair.info().capabilities.rdma_write) FAULTLINE_SKIP(target.label() + " has no RDMA write");
  const size_t bytes = 64 * 1024 + 5;
  transports::RegisteredBuffer source = pair.buffer_a(bytes);
  transports::RegisteredBuffer target_region = pair.buffer_b(bytes + 4096);
  fill_pattern(source.data(), bytes, 5);
  Segment segment = source.whole();
  REQUIRE_OK(pair.a().post_send({.wr_id = 21,
                                 .op = Opcode::kRdmaWrite,
                                 .segments = {&segment, 1},
                                 .remote = target_region.region->remote(100, bytes)}));
  Completion written = pair.wait_a();
  INFO(written.describe());
  REQUIRE(written.ok());
  REQUIRE(written.op == Opcode::kRdmaWrite);
  CHECK(pair.drain_b().empty());
  CHECK(target_region.data()[99] == std::byte{0});
  CHECK(first_pattern_mismatch(target_region.data() + 100, bytes, 5) == bytes);
  CHECK(target_region.data()[100 + bytes] == std::byte{0});
}
TRANSPORT_CONFORMANCE_CASE(rdma_write, "RDMA write places the bytes at the remote offset")

// A writes with immediate into B three times; B has receives posted, as a protocol would for
// its messages, whether or not the transport consumes one for the immediate (verbs does,
// libfabric does not).
// Expect: B gets a RECV_RDMA_WITH_IMM completion per write carrying its immediate, and the
// bytes; where no receive is consumed the completion names none (shm in libfabric 1.17 can
// leave garbage in op_context there: the tagged engine's grouped-receive test over shm is
// where reading it crashed).
void rdma_write_with_imm(const Target& target) {
  TransportPair pair(target);
  const Capabilities caps = pair.info().capabilities;
  if (!caps.write_with_imm) FAULTLINE_SKIP(target.label() + " has no write with immediate");
  const size_t bytes = 8192;
  transports::RegisteredBuffer source = pair.buffer_a(bytes);
  transports::RegisteredBuffer target_region = pair.buffer_b(bytes);
  transports::RegisteredBuffer receive = pair.buffer_b(size_t{64} * 3);
  fill_pattern(source.data(), bytes, 6);
  Segment segment = source.whole();
  for (uint64_t i = 0; i < 3; ++i) {
    Segment recv_segment = receive.segment(64 * i, 64);
    REQUIRE_OK(pair.b().post_recv({33 + i, {&recv_segment, 1}}));
  }
  for (uint32_t i = 0; i < 3; ++i) {
    REQUIRE_OK(pair.a().post_send({.wr_id = 22 + i,
                                   .op = Opcode::kRdmaWriteWithImm,
                                   .segments = {&segment, 1},
                                   .imm = 0xfeed0001U + i,
                                   .remote = target_region.region->remote()}));
    Completion arrived = pair.wait_b();
    INFO(arrived.describe());
    REQUIRE(arrived.ok());
    REQUIRE(arrived.op == Opcode::kRecvRdmaWithImm);
    REQUIRE(arrived.imm == 0xfeed0001U + i);
    if (caps.write_imm_consumes_recv) {
      CHECK(arrived.wr_id == 33 + i);
    } else {
      CHECK(arrived.wr_id == 0);
    }
    REQUIRE(first_pattern_mismatch(target_region.data(), bytes, 6) == bytes);
    Completion written = pair.wait_a();
    REQUIRE(written.ok());
    REQUIRE(written.op == Opcode::kRdmaWriteWithImm);
  }
}
TRANSPORT_CONFORMANCE_CASE(rdma_write_with_imm, "RDMA write with immediate delivers the immediate")

// A sends with immediate 0x1234abcd.
// Expect: B's receive completes with the immediate and the bytes.
void send_with_imm(const Target& target) {
  TransportPair pair(target);
  if (!pair.info().capabilities.send_with_imm)
    FAULTLINE_SKIP(target.label() + " has no send with immediate");
  transports::RegisteredBuffer source = pair.buffer_a(512);
  transports::RegisteredBuffer sink = pair.buffer_b(512);
  fill_pattern(source.data(), 512, 7);
  Segment send_segment = source.whole();
  Segment recv_segment = sink.whole();
  REQUIRE_OK(pair.b().post_recv({3, {&recv_segment, 1}}));
  REQUIRE_OK(pair.a().post_send({.wr_id = 4,
                                 .op = Opcode::kSendWithImm,
                                 .segments = {&send_segment, 1},
                                 .imm = 0x1234abcdU}));
  Completion received = pair.wait_b();
  INFO(received.describe());
  REQUIRE(received.ok());
  REQUIRE(received.imm == 0x1234abcdU);
  REQUIRE(first_pattern_mismatch(sink.data(), 512, 7) == 512);
  REQUIRE(pair.wait_a().ok());
}
TRANSPORT_CONFORMANCE_CASE(send_with_imm, "send with immediate delivers the immediate")

// A reads 128 KiB + 3 bytes from B's region into two local segments.
// Expect: A's read completes and both segments hold B's bytes.
void rdma_read(const Target& target) {
  TransportPair pair(target);
  if (!pair.info().capabilities.rdma_read) FAULTLINE_SKIP(target.label() + " has no RDMA read");
  const size_t bytes = 128 * 1024 + 3;
  transports::RegisteredBuffer remote_source = pair.buffer_b(bytes);
  transports::RegisteredBuffer local = pair.buffer_a(bytes);
  fill_pattern(remote_source.data(), bytes, 8);
  Segment segment = local.whole();
  REQUIRE_OK(pair.a().post_send({.wr_id = 23,
                                 .op = Opcode::kRdmaRead,
                                 .segments = {&segment, 1},
                                 .remote = remote_source.region->remote()}));
  Completion read = pair.wait_a();
  INFO(read.describe());
  REQUIRE(read.ok());
  REQUIRE(read.op == Opcode::kRdmaRead);
  REQUIRE(first_pattern_mismatch(local.data(), bytes, 8) == bytes);
}
TRANSPORT_CONFORMANCE_CASE(rdma_read, "RDMA read fetches the remote bytes")

}  // namespace

namespace {

// Sends of active MTU - 1, MTU and MTU + 1 bytes (4096 where the transport has no MTU).
// Expect: exact bytes on both sides of the packet boundary.
void sizes_around_mtu(const Target& target) {
  const uint32_t mtu = limits_of(target).active_mtu.value_or(4096);
  for (size_t bytes : {size_t{mtu} - 1, size_t{mtu}, size_t{mtu} + 1}) {
    CAPTURE(mtu, bytes);
    check_send_recv(target, bytes);
  }
}
TRANSPORT_CONFORMANCE_CASE(sizes_around_mtu, "send and receive around the active MTU")

// A posts 7 unsignaled sends, then one signaled send; B receives all 8.
// Expect: A sees exactly one completion, the signaled one; B gets the 8 messages in order.
void unsignaled_then_signaled(const Target& target) {
  TransportPair pair(target);
  transports::RegisteredBuffer source = pair.buffer_a(size_t{8} * 128);
  transports::RegisteredBuffer sink = pair.buffer_b(size_t{8} * 128);
  for (size_t i = 0; i < 8; ++i) std::fill_n(source.data() + i * 128, 128, std::byte(i + 1));
  for (uint64_t i = 0; i < 8; ++i) {
    Segment segment = sink.segment(i * 128, 128);
    REQUIRE_OK(pair.b().post_recv({200 + i, {&segment, 1}}));
  }
  for (uint64_t i = 0; i < 8; ++i) {
    Segment segment = source.segment(i * 128, 128);
    REQUIRE_OK(pair.a().post_send(
        {.wr_id = 300 + i, .op = Opcode::kSend, .segments = {&segment, 1}, .signaled = i == 7}));
  }
  for (uint64_t i = 0; i < 8; ++i) {
    Completion received = pair.wait_b();
    INFO(received.describe());
    REQUIRE(received.ok());
    CHECK(received.wr_id == 200 + i);
  }
  auto at_sender = pair.drain_a();
  REQUIRE(at_sender.size() == 1);
  CHECK(at_sender[0].wr_id == 307);
  CHECK(at_sender[0].ok());
  for (size_t i = 0; i < 8; ++i) CHECK(sink.data()[i * 128 + 127] == std::byte(i + 1));
}
TRANSPORT_CONFORMANCE_CASE(unsignaled_then_signaled,
                           "unsignaled sends complete silently before a signaled one")

// A reads 3 slices of B's region into 3 local segments in one RDMA read.
// Expect: the segments hold B's bytes back to back.
void read_into_segments(const Target& target) {
  const DeviceLimits limits = limits_of(target);
  if (limits.max_sge_rd < 3) FAULTLINE_SKIP(target.label() + " reads into fewer than 3 segments");
  EndpointConfig config;
  config.max_send_sge = std::min<uint32_t>(3, limits.max_send_sge);
  TransportPair pair(target, config);
  if (!pair.info().capabilities.rdma_read) FAULTLINE_SKIP(target.label() + " has no RDMA read");
  transports::RegisteredBuffer remote_source = pair.buffer_b(3000);
  transports::RegisteredBuffer local = pair.buffer_a(4096);
  fill_pattern(remote_source.data(), 3000, 11);
  std::vector<Segment> segments = {local.segment(0, 1000), local.segment(1500, 1000),
                                   local.segment(3000, 1000)};
  REQUIRE_OK(pair.a().post_send({.wr_id = 24,
                                 .op = Opcode::kRdmaRead,
                                 .segments = segments,
                                 .remote = remote_source.region->remote()}));
  Completion read = pair.wait_a();
  INFO(read.describe());
  REQUIRE(read.ok());
  CHECK(std::equal(remote_source.data(), remote_source.data() + 1000, local.data()));
  CHECK(std::equal(remote_source.data() + 1000, remote_source.data() + 2000, local.data() + 1500));
  CHECK(std::equal(remote_source.data() + 2000, remote_source.data() + 3000, local.data() + 3000));
}
TRANSPORT_CONFORMANCE_CASE(read_into_segments, "RDMA read scatters into several local segments")

}  // namespace
