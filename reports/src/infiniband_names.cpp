#include "faultline/reports/infiniband_names.hpp"

#include <map>

namespace faultline::reports {

namespace {

// sysfs counter file -> node_exporter's name (collector/infiniband_linux.go).
const std::map<std::string, std::string>& known_names() {
  static const std::map<std::string, std::string> names = {
      // counters/ (the IB PortCounters attribute)
      {"counters/excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors_total"},
      {"counters/link_downed", "link_downed_total"},
      {"counters/link_error_recovery", "link_error_recovery_total"},
      {"counters/local_link_integrity_errors", "local_link_integrity_errors_total"},
      {"counters/multicast_rcv_packets", "multicast_packets_received_total"},
      {"counters/multicast_xmit_packets", "multicast_packets_transmitted_total"},
      {"counters/port_rcv_constraint_errors", "port_constraint_errors_received_total"},
      {"counters/port_xmit_constraint_errors", "port_constraint_errors_transmitted_total"},
      {"counters/port_rcv_data", "port_data_received_bytes_total"},
      {"counters/port_xmit_data", "port_data_transmitted_bytes_total"},
      {"counters/port_rcv_discards", "port_discards_received_total"},
      {"counters/port_xmit_discards", "port_discards_transmitted_total"},
      {"counters/port_rcv_errors", "port_errors_received_total"},
      {"counters/port_rcv_packets", "port_packets_received_total"},
      {"counters/port_xmit_packets", "port_packets_transmitted_total"},
      {"counters/port_xmit_wait", "port_transmit_wait_total"},
      {"counters/unicast_rcv_packets", "unicast_packets_received_total"},
      {"counters/unicast_xmit_packets", "unicast_packets_transmitted_total"},
      {"counters/port_rcv_remote_physical_errors", "port_receive_remote_physical_errors_total"},
      {"counters/port_rcv_switch_relay_errors", "port_receive_switch_relay_errors_total"},
      {"counters/symbol_error", "symbol_error_total"},
      {"counters/VL15_dropped", "vl15_dropped_total"},
      // hw_counters/ of mlx5
      {"hw_counters/duplicate_request", "duplicate_requests_packets_total"},
      {"hw_counters/implied_nak_seq_err", "implied_nak_seq_errors_total"},
      {"hw_counters/local_ack_timeout_err", "local_ack_timeout_errors_total"},
      {"hw_counters/np_cnp_sent", "np_cnp_packets_sent_total"},
      {"hw_counters/np_ecn_marked_roce_packets", "np_ecn_marked_roce_packets_received_total"},
      {"hw_counters/out_of_buffer", "out_of_buffer_drops_total"},
      {"hw_counters/out_of_sequence", "out_of_sequence_packets_received_total"},
      {"hw_counters/packet_seq_err", "packet_sequence_errors_total"},
      {"hw_counters/req_cqe_error", "req_cqes_errors_total"},
      {"hw_counters/req_cqe_flush_error", "req_cqes_flush_errors_total"},
      {"hw_counters/req_remote_access_errors", "req_remote_access_errors_total"},
      {"hw_counters/req_remote_invalid_request", "req_remote_invalid_request_errors_total"},
      {"hw_counters/resp_cqe_error", "resp_cqes_errors_total"},
      {"hw_counters/resp_cqe_flush_error", "resp_cqes_flush_errors_total"},
      {"hw_counters/resp_local_length_error", "resp_local_length_errors_total"},
      {"hw_counters/resp_remote_access_errors", "resp_remote_access_errors_total"},
      {"hw_counters/rnr_nak_retry_err", "rnr_nak_retry_packets_received_total"},
      {"hw_counters/roce_adp_retrans", "roce_adp_retransmits_total"},
      {"hw_counters/roce_adp_retrans_to", "roce_adp_retransmits_timeout_total"},
      {"hw_counters/roce_slow_restart", "roce_slow_restart_used_total"},
      {"hw_counters/roce_slow_restart_cnps", "roce_slow_restart_cnps_total"},
      {"hw_counters/roce_slow_restart_trans", "roce_slow_restart_total"},
      {"hw_counters/rp_cnp_handled", "rp_cnp_packets_handled_total"},
      {"hw_counters/rp_cnp_ignored", "rp_cnp_ignored_packets_received_total"},
      {"hw_counters/rx_atomic_requests", "rx_atomic_requests_total"},
      {"hw_counters/rx_dct_connect", "rx_dct_connect_requests_total"},
      {"hw_counters/rx_read_requests", "rx_read_requests_total"},
      {"hw_counters/rx_write_requests", "rx_write_requests_total"},
      {"hw_counters/rx_icrc_encapsulated", "rx_icrc_encapsulated_errors_total"},
      // hw_counters/ of rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c) that mean what an
      // mlx5 or IB counter above means
      {"hw_counters/rcvd_rnr_err", "rnr_nak_retry_packets_received_total"},
      {"hw_counters/out_of_seq_request", "out_of_sequence_packets_received_total"},
      {"hw_counters/rcvd_seq_err", "packet_sequence_errors_total"},
      {"hw_counters/sent_pkts", "port_packets_transmitted_total"},
      {"hw_counters/rcvd_pkts", "port_packets_received_total"},
      {"hw_counters/link_downed", "link_downed_total"},
  };
  return names;
}

// "VL15-dropped" -> "vl15_dropped": what Prometheus allows in a name.
std::string metric_safe(const std::string& text) {
  std::string safe;
  for (const char c : text) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    safe += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : (allowed ? c : '_');
  }
  return safe;
}

}  // namespace

InfinibandMetric infiniband_metric(const std::string& key) {
  if (auto known = known_names().find(key); known != known_names().end()) {
    const bool words = key == "counters/port_rcv_data" || key == "counters/port_xmit_data";
    return {known->second, words ? 4U : 1U};
  }
  const std::string file = key.substr(key.find('/') + 1);
  if (file == "lifespan") return {"", 1};  // mlx5: how often the counters refresh, not a count
  return {metric_safe(file) + "_total", 1};
}

}  // namespace faultline::reports
