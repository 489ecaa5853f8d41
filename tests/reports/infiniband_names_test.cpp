// Port counters get node_exporter's names, rxe counters the name of the mlx5 or IB counter
// that means the same.
#include "faultline/reports/infiniband_names.hpp"

#include <catch2/catch.hpp>

using faultline::reports::infiniband_metric;

TEST_CASE("port counters are named as node_exporter's infiniband collector names them", "[unit]") {
  CHECK(infiniband_metric("counters/port_rcv_packets").name == "port_packets_received_total");
  CHECK(infiniband_metric("hw_counters/rnr_nak_retry_err").name ==
        "rnr_nak_retry_packets_received_total");
  CHECK(infiniband_metric("hw_counters/out_of_buffer").name == "out_of_buffer_drops_total");
  // The IB data counters count 4-octet words; the metric is in bytes.
  CHECK(infiniband_metric("counters/port_xmit_data").name == "port_data_transmitted_bytes_total");
  CHECK(infiniband_metric("counters/port_xmit_data").multiplier == 4);
  CHECK(infiniband_metric("counters/port_xmit_packets").multiplier == 1);
}

TEST_CASE("rxe counters share the names of the counters that mean the same", "[unit]") {
  CHECK(infiniband_metric("hw_counters/rcvd_rnr_err").name ==
        infiniband_metric("hw_counters/rnr_nak_retry_err").name);
  CHECK(infiniband_metric("hw_counters/rcvd_seq_err").name == "packet_sequence_errors_total");
  CHECK(infiniband_metric("hw_counters/sent_pkts").name == "port_packets_transmitted_total");
}

TEST_CASE("other counters become NAME_total in what Prometheus allows, and lifespan none",
          "[unit]") {
  CHECK(infiniband_metric("hw_counters/retry_rnr_exceeded_err").name ==
        "retry_rnr_exceeded_err_total");
  CHECK(infiniband_metric("hw_counters/Odd-Name.2").name == "odd_name_2_total");
  CHECK(infiniband_metric("hw_counters/lifespan").name.empty());
}
