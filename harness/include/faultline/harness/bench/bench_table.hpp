#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "faultline/harness/bench/allreduce.hpp"
#include "faultline/harness/bench/bandwidth.hpp"
#include "faultline/harness/bench/pingpong.hpp"

namespace faultline::harness::bench {

/// One column of a benchmark's rows: its table heading and width (the reference tool's, so its
/// users read it at once), its JSON key, and its value in a row.
template <typename Row>
struct Column {
  const char* heading;
  int width;
  int precision;  ///< digits after the point in the table; -1: a whole number
  const char* key;
  double (*value)(const Row& row);
  double table_scale = 1;  ///< the table shows value x this (MsgRate in Mpps)
};

/// The columns of each row type: ib_send_lat's, ib_send_bw's and nccl-tests' layouts.
std::span<const Column<LatencyRow>> columns_of(const LatencyRow*);
std::span<const Column<BandwidthRow>> columns_of(const BandwidthRow*);
std::span<const Column<AllreduceRow>> columns_of(const AllreduceRow*);

/// The rows as a table under its column headings.
template <typename Row>
void print_table(std::ostream& out, const std::vector<Row>& rows);
/// The rows as JSON objects, one key per column.
template <typename Row>
nlohmann::json rows_json(const std::vector<Row>& rows);

}  // namespace faultline::harness::bench
