#include "faultline/reports/pushgateway.hpp"

#include <curl/curl.h>
#include <prometheus/gateway.h>
#include <prometheus/registry.h>

#include <memory>

namespace faultline::reports {

namespace {

// "http://host:9091/" -> ("http://host", "9091"); nullopt without a port.
std::optional<std::pair<std::string, std::string>> host_and_port(const std::string& url) {
  std::string trimmed = url;
  while (!trimmed.empty() && trimmed.back() == '/') trimmed.pop_back();
  const size_t colon = trimmed.rfind(':');
  const size_t scheme = trimmed.find("://");
  if (colon == std::string::npos || (scheme != std::string::npos && colon <= scheme + 2))
    return std::nullopt;
  return std::pair{trimmed.substr(0, colon), trimmed.substr(colon + 1)};
}

Error bad_url(const PushGroup& group) {
  return Error{ErrorCode::kInvalidArgument,
               "--pushgateway " + group.url + ": expected http://HOST:PORT"};
}

size_t append_body(char* data, size_t size, size_t count, void* body) {
  static_cast<std::string*>(body)->append(data, size * count);
  return size * count;
}

// GET `url` within `timeout`: the body of a 2xx answer.
Result<std::string> http_get(const std::string& url, std::chrono::milliseconds timeout) {
  const std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(),
                                                                 curl_easy_cleanup);
  if (!curl) return Error{ErrorCode::kInternal, "curl_easy_init failed"};
  std::string body;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  const CURLcode code = curl_easy_perform(curl.get());
  if (code != CURLE_OK) {
    return Error{ErrorCode::kIoError, "GET " + url + ": " + curl_easy_strerror(code) +
                                          " (curl code " + std::to_string(static_cast<int>(code)) +
                                          ")"}
        .with_hint("nothing answered: is the Pushgateway running there?");
  }
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    return Error{ErrorCode::kIoError, "GET " + url + " answered HTTP " + std::to_string(status)};
  }
  return body;
}

// The group's families from one entry of the API's "data".
nlohmann::json families_of(const nlohmann::json& entry) {
  nlohmann::json families = nlohmann::json::object();
  for (const auto& [name, family] : entry.items()) {
    if (!family.is_object() || !family.contains("metrics") || !family.at("metrics").is_array())
      continue;  // "labels", "last_push_successful"
    nlohmann::json metrics = nlohmann::json::array();
    for (const nlohmann::json& metric : family.at("metrics")) {
      if (metric.is_object() && metric.value("labels", nlohmann::json()).is_object())
        metrics.push_back(metric);
    }
    families[name] = {{"type", family.value("type", "")}, {"metrics", std::move(metrics)}};
  }
  return families;
}

}  // namespace

std::string PushGroup::describe() const {
  std::string text = "job=" + job;
  for (const auto& [label, value] : labels) text += " " + label + "=" + value;
  return text + " at " + url;
}

std::string grouping_value(const std::string& text) {
  if (text.empty()) return "none";
  std::string value = text;
  for (char& c : value) {
    const bool allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                         (c >= '0' && c <= '9') ||
                         std::string_view("._:@+-").find(c) != std::string_view::npos;
    if (!allowed) c = '-';
  }
  return value;
}

Result<nlohmann::json> read_push_group(const PushGroup& group, std::chrono::milliseconds timeout) {
  const auto where = host_and_port(group.url);
  if (!where) return bad_url(group);
  auto body = http_get(where->first + ":" + where->second + "/api/v1/metrics", timeout);
  if (!body.ok()) return body.error();
  nlohmann::json grouping = {{"job", group.job}};
  for (const auto& [label, value] : group.labels) grouping[label] = value;
  const nlohmann::json answer = nlohmann::json::parse(body.value(), nullptr, false);
  if (!answer.is_object() || answer.value("status", "") != "success" ||
      !answer.value("data", nlohmann::json()).is_array()) {
    return Error{ErrorCode::kProtocolViolation,
                 group.url + "/api/v1/metrics did not answer as a Pushgateway's API does"}
        .with_hint("is --pushgateway the address of a Prometheus Pushgateway (1.0 or later)?");
  }
  for (const auto& entry : answer.at("data")) {
    if (entry.is_object() && entry.value("labels", nlohmann::json()) == grouping)
      return families_of(entry);
  }
  return nlohmann::json::object();
}

Status push_group(const PushGroup& group, const std::shared_ptr<prometheus::Registry>& registry) {
  const auto where = host_and_port(group.url);
  if (!where) return bad_url(group);
  try {
    prometheus::Gateway gateway(where->first, where->second, group.job,
                                prometheus::Labels(group.labels.begin(), group.labels.end()));
    gateway.RegisterCollectable(registry);
    const int status = gateway.Push();
    if (status < 200 || status >= 300) {
      return Error{ErrorCode::kIoError, "the Pushgateway at " + group.url + " answered HTTP " +
                                            std::to_string(status) + " to the push of " +
                                            group.describe()}
          .with_hint(status < 0 ? "nothing answered: is the Pushgateway running there?" : "");
    }
  } catch (const std::exception& e) {
    return Error{ErrorCode::kIoError, "pushing to " + group.url + ": " + std::string(e.what())};
  }
  return {};
}

}  // namespace faultline::reports
