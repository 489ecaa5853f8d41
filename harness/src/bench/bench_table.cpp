// The rows of each benchmark as a table and as JSON, from one list of columns per row type.
#include "faultline/harness/bench/bench_table.hpp"

#include <array>
#include <iomanip>
#include <ostream>

namespace faultline::harness::bench {

namespace {

// Named and ordered as perftest's ib_send_lat prints them (t_typical is the median, t_avg the
// mean), so the two tools' outputs read side by side.
constexpr std::array<Column<LatencyRow>, 9> kLatencyColumns{{
    {"#bytes", 10, -1, "bytes", [](const LatencyRow& r) { return double(r.bytes); }},
    {"#iterations", 13, -1, "iterations", [](const LatencyRow& r) { return double(r.iterations); }},
    {"t_min[usec]", 15, 2, "min_us", [](const LatencyRow& r) { return r.min_us; }},
    {"t_max[usec]", 15, 2, "max_us", [](const LatencyRow& r) { return r.max_us; }},
    {"t_typical[usec]", 17, 2, "median_us", [](const LatencyRow& r) { return r.median_us; }},
    {"t_avg[usec]", 15, 2, "mean_us", [](const LatencyRow& r) { return r.mean_us; }},
    {"t_stdev[usec]", 17, 2, "stdev_us", [](const LatencyRow& r) { return r.stdev_us; }},
    {"99% percentile[usec]", 23, 2, "p99_us", [](const LatencyRow& r) { return r.p99_us; }},
    {"99.9% percentile[usec]", 25, 2, "p99_9_us", [](const LatencyRow& r) { return r.p999_us; }},
}};

constexpr std::array<Column<BandwidthRow>, 4> kBandwidthColumns{{
    {"#bytes", 10, -1, "bytes", [](const BandwidthRow& r) { return double(r.bytes); }},
    {"#iterations", 13, -1, "iterations",
     [](const BandwidthRow& r) { return double(r.iterations); }},
    {"BW average[MB/sec]", 20, 2, "mib_per_second",
     [](const BandwidthRow& r) { return r.mib_per_second; }},
    {"MsgRate[Mpps]", 16, 6, "messages_per_second",
     [](const BandwidthRow& r) { return r.messages_per_second; }, 1e-6},
}};

constexpr std::array<Column<AllreduceRow>, 7> kAllreduceColumns{{
    {"ranks", 7, -1, "ranks", [](const AllreduceRow& r) { return double(r.ranks); }},
    {"size(B)", 12, -1, "bytes", [](const AllreduceRow& r) { return double(r.bytes); }},
    {"#iterations", 13, -1, "iterations",
     [](const AllreduceRow& r) { return double(r.iterations); }},
    {"time(us)", 13, 1, "median_us", [](const AllreduceRow& r) { return r.median_us; }},
    {"algbw(GB/s)", 16, 3, "algbw_gb_s", [](const AllreduceRow& r) { return r.algbw_gb_s; }},
    {"busbw(GB/s)", 16, 3, "busbw_gb_s", [](const AllreduceRow& r) { return r.busbw_gb_s; }},
    {"#wrong", 8, -1, "wrong", [](const AllreduceRow& r) { return double(r.wrong); }},
}};

}  // namespace

std::span<const Column<LatencyRow>> columns_of(const LatencyRow*) { return kLatencyColumns; }
std::span<const Column<BandwidthRow>> columns_of(const BandwidthRow*) { return kBandwidthColumns; }
std::span<const Column<AllreduceRow>> columns_of(const AllreduceRow*) { return kAllreduceColumns; }

template <typename Row>
void print_table(std::ostream& out, const std::vector<Row>& rows) {
  const auto columns = columns_of(static_cast<const Row*>(nullptr));
  for (const auto& column : columns) out << std::setw(column.width) << column.heading;
  out << "\n" << std::fixed;
  for (const Row& row : rows) {
    for (const auto& column : columns) {
      out << std::setprecision(std::max(column.precision, 0)) << std::setw(column.width)
          << column.value(row) * column.table_scale;
    }
    out << "\n";
  }
}

template <typename Row>
nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& row : rows) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& column : columns_of(static_cast<const Row*>(nullptr))) {
      const double value = column.value(row);
      object[column.key] = column.precision < 0 ? nlohmann::json(static_cast<uint64_t>(value))
                                                : nlohmann::json(value);
    }
    out.push_back(std::move(object));
  }
  return out;
}

template void print_table(std::ostream&, const std::vector<LatencyRow>&);
template void print_table(std::ostream&, const std::vector<BandwidthRow>&);
template void print_table(std::ostream&, const std::vector<AllreduceRow>&);
template nlohmann::json rows_json(const std::vector<LatencyRow>&);
template nlohmann::json rows_json(const std::vector<BandwidthRow>&);
template nlohmann::json rows_json(const std::vector<AllreduceRow>&);

}  // namespace faultline::harness::bench
