#include <catch2/catch.hpp>

#include <set>

#include "faultline/transports/completion_status.hpp"
#include "faultline/transports/types.hpp"

using namespace faultline;
using namespace faultline::transports;

TEST_CASE("Every completion status has a distinct verbs-style name that parses back", "[unit]") {
  std::set<std::string_view> names;
  for (const auto& row : kCompletionStatusTable) {
    const CompletionStatus status = row.status;
    const std::string_view name = to_string(status);
    CAPTURE(name);
    CHECK(name != "UNKNOWN");
    CHECK(names.insert(name).second);
    CHECK(completion_status_from_string(name) == status);
  }
  CHECK(names.size() == 24);
  CHECK(to_string(CompletionStatus::kRnrRetryExcErr) == "RNR_RETRY_EXC_ERR");
  CHECK_FALSE(completion_status_from_string("NOT_A_STATUS").has_value());
}

TEST_CASE("Opcodes have names that parse back", "[unit]") {
  for (Opcode op :
       {Opcode::kSend, Opcode::kSendWithImm, Opcode::kRdmaWrite, Opcode::kRdmaWriteWithImm,
        Opcode::kRdmaRead, Opcode::kRecv, Opcode::kRecvRdmaWithImm}) {
    CHECK(opcode_from_string(to_string(op)) == op);
  }
  CHECK_FALSE(opcode_from_string("WRITE").has_value());
}

TEST_CASE("A completion describes itself with qp, wr_id, status and native codes", "[unit]") {
  Completion completion;
  completion.qp_num = 0x12;
  completion.wr_id = 0x10001;
  completion.op = Opcode::kRdmaWrite;
  completion.status = CompletionStatus::kWrFlushErr;
  completion.native_status = 5;
  CHECK_THAT(
      completion.describe(),
      Catch::StartsWith(
          "qp 0x12 wr_id 0x10001 op RDMA_WRITE status WR_FLUSH_ERR (native 5) vendor_err 0x0"));
}
