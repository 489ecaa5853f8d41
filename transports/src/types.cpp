#include "faultline/transports/types.hpp"

#include <sstream>

namespace faultline::transports {

std::string_view to_string(Opcode op) {
  switch (op) {
    case Opcode::kSend: return "SEND";
    case Opcode::kSendWithImm: return "SEND_WITH_IMM";
    case Opcode::kRdmaWrite: return "RDMA_WRITE";
    case Opcode::kRdmaWriteWithImm: return "RDMA_WRITE_WITH_IMM";
    case Opcode::kRdmaRead: return "RDMA_READ";
    case Opcode::kRecv: return "RECV";
    case Opcode::kRecvRdmaWithImm: return "RECV_RDMA_WITH_IMM";
  }
  return "UNKNOWN";
}

bool is_send_side(Opcode op) {
  switch (op) {
    case Opcode::kSend:
    case Opcode::kSendWithImm:
    case Opcode::kRdmaWrite:
    case Opcode::kRdmaWriteWithImm:
    case Opcode::kRdmaRead: return true;
    case Opcode::kRecv:
    case Opcode::kRecvRdmaWithImm: return false;
  }
  return false;
}

std::optional<Opcode> opcode_from_string(std::string_view name) {
  for (Opcode op : kAllOpcodes) {
    if (to_string(op) == name) return op;
  }
  return std::nullopt;
}

std::string Completion::describe() const {
  std::ostringstream out;
  out << "qp 0x" << std::hex << qp_num << " wr_id 0x" << wr_id << std::dec << " op "
      << to_string(op) << " status " << to_string(status) << " (native " << native_status;
  if (!native_text.empty()) out << " " << native_text;
  out << ") vendor_err 0x" << std::hex << vendor_err << std::dec << " byte_len " << byte_len;
  if (imm) out << " imm 0x" << std::hex << *imm << std::dec;
  return out.str();
}

}  // namespace faultline::transports
