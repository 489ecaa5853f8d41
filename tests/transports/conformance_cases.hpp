#pragma once

#include <catch2/catch.hpp>

#include "support/test_targets.hpp"
#include "support/transport_pair.hpp"

namespace faultline::testing {

/// The limits `target`'s device reports.
inline transports::DeviceLimits limits_of(const transports::Target& target) {
  return open_device(target)->info().limits;
}

}  // namespace faultline::testing

// Registers one conformance check as a separate test case per target, so that CTest lists
// (and labels) every transport/provider pair: "ofi/tcp: send and receive 4096 bytes".
// The verbs case exists where the verbs transport is built; it runs in the Soft-RoCE lane.

#if FAULTLINE_WITH_VERBS
#define FAULTLINE_VERBS_CONFORMANCE_CASE(check, description) \
  TEST_CASE("verbs: " description, "[integration][verbs]") { \
    check(::faultline::testing::verbs_device());             \
  }
#else
#define FAULTLINE_VERBS_CONFORMANCE_CASE(check, description)
#endif

#define TRANSPORT_CONFORMANCE_CASE(check, description)           \
  TEST_CASE("ofi/tcp: " description, "[integration][ofi]") {     \
    check(::faultline::testing::ofi_tcp());                      \
  }                                                              \
  TEST_CASE("ofi/shm: " description, "[integration][ofi]") {     \
    check(::faultline::testing::ofi_shm());                      \
  }                                                              \
  TEST_CASE("ofi/sockets: " description, "[integration][ofi]") { \
    check(::faultline::testing::ofi_sockets());                  \
  }                                                              \
  FAULTLINE_VERBS_CONFORMANCE_CASE(check, description)
