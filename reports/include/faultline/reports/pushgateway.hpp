#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "faultline/core/status.hpp"

namespace prometheus {
class Registry;
}

namespace faultline::reports {

/// One group of a Pushgateway: where the gateway is and the group's grouping key. faultline
/// pushes under job "faultline" with `instance` (the agent's or host's name) and `suite`, so
/// two nodes, or two CI jobs, pushing to one gateway keep their own groups.
struct PushGroup {
  std::string url;  ///< "http://HOST[:PORT][/PATH]" (or https): pushgateway_base
  std::string job = "faultline";
  std::map<std::string, std::string> labels;  ///< the rest of the grouping key

  /// "job=faultline instance=node7 suite=links at http://127.0.0.1:9091", for messages.
  std::string describe() const;
};

/// The base every request to a Pushgateway extends: `url` as curl parses it (curl_url), its
/// trailing slashes gone: "http://pushgateway" (port 80), "http://host:9091/",
/// "https://gw.example/prefix/" (a gateway behind a path, `--web.route-prefix`). kInvalidArgument
/// naming what is wrong for anything else: no http or https scheme, no host, a port outside
/// 1-65535, a user, a query or a fragment.
Result<std::string> pushgateway_base(const std::string& url);

/// A label value as a grouping key (and a URL path segment) can carry it: characters outside
/// A-Z a-z 0-9 . _ : @ + - become '-', an empty value "none".
std::string grouping_value(const std::string& text);

/// What the Pushgateway holds for `group` now, read from its API (GET /api/v1/metrics): the
/// group's metric families as the API gives them (name -> {"type": "COUNTER", "metrics":
/// [{"labels": {...}, "value": "3"}]}, histograms with "buckets", "count" and "sum"), each
/// metric's labels with those of the grouping key. An empty object when the gateway holds
/// nothing for the group. kIoError (naming the URL) when the gateway cannot be read within
/// `timeout`, kProtocolViolation when what it answers is not its API or is larger than 16 MiB.
Result<nlohmann::json> read_push_group(const PushGroup& group, std::chrono::milliseconds timeout);

/// Replaces the group's metrics with everything in `registry` (HTTP PUT of the text format to
/// /metrics/job/JOB/LABEL/VALUE...), all of it within `timeout`, a redirect not followed.
/// kIoError naming the URL and the HTTP status (or curl's reason) when the gateway refuses, is
/// not there or does not answer in time.
Status push_group(const PushGroup& group, const std::shared_ptr<prometheus::Registry>& registry,
                  std::chrono::milliseconds timeout);

}  // namespace faultline::reports
