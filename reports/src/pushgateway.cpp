#include "faultline/reports/pushgateway.hpp"

#include <curl/curl.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <memory>
#include <string_view>

namespace faultline::reports {

namespace {

using CurlUrl = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;

// One part of a parsed URL ("" when it has none).
std::string url_part(const CurlUrl& url, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(url.get(), part, &text, 0) != CURLUE_OK || text == nullptr) return "";
  std::string copy = text;
  curl_free(text);
  return copy;
}

}  // namespace

Result<std::string> pushgateway_base(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return Error{ErrorCode::kInvalidArgument,
                 "expected http://HOST[:PORT][/PATH] (or https), got '" + url + "': " + why};
  };
  CurlUrl parsed(curl_url(), curl_url_cleanup);
  if (!parsed) return Error{ErrorCode::kInternal, "curl_url failed"};
  if (const CURLUcode code = curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0);
      code != CURLUE_OK)
    return bad(curl_url_strerror(code));
  const std::string scheme = url_part(parsed, CURLUPART_SCHEME);
  if (scheme != "http" && scheme != "https") return bad("the scheme is " + scheme);
  if (url_part(parsed, CURLUPART_HOST).empty()) return bad("no host");
  if (!url_part(parsed, CURLUPART_QUERY).empty() || !url_part(parsed, CURLUPART_FRAGMENT).empty())
    return bad("a query or fragment");
  if (!url_part(parsed, CURLUPART_USER).empty()) return bad("a user name");
  const std::string port = url_part(parsed, CURLUPART_PORT);
  if (!port.empty() && (port.size() > 5 || std::stoul(port) < 1 || std::stoul(port) > 65535))
    return bad("port " + port);
  std::string base = url_part(parsed, CURLUPART_URL);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

namespace {

// The most an answer may carry: a gateway's API answer for a few thousand series is far less.
constexpr size_t kLargestAnswer = 16 << 20;

struct Answer {
  std::string body;
  bool too_large = false;
};

size_t append_body(char* data, size_t size, size_t count, void* answer) {
  auto& taken = *static_cast<Answer*>(answer);
  if (taken.body.size() + size * count > kLargestAnswer) {
    taken.too_large = true;
    return 0;  // curl ends the transfer
  }
  taken.body.append(data, size * count);
  return size * count;
}

// `method` (GET or PUT with `body`) to `url`, all of it within `timeout` (a gateway that
// accepts and never answers, or drips a byte a second, ends there), redirects not followed: the
// body of a 2xx answer, of at most kLargestAnswer bytes.
Result<std::string> http_request(const char* method, const std::string& url,
                                 const std::string& body, std::chrono::milliseconds timeout) {
  const std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(),
                                                                 curl_easy_cleanup);
  if (!curl) return Error{ErrorCode::kInternal, "curl_easy_init failed"};
  Answer answer;
  const std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, "Content-Type: text/plain; version=0.0.4; charset=utf-8"),
      curl_slist_free_all);
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_CUSTOMREQUEST, method);
  if (std::string_view(method) != "GET") {
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
  }
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &answer);
  const CURLcode code = curl_easy_perform(curl.get());
  const std::string request = std::string(method) + " " + url;
  if (answer.too_large) {
    return Error{ErrorCode::kProtocolViolation, request + ": the answer is larger than " +
                                                    std::to_string(kLargestAnswer >> 20) + " MiB"};
  }
  if (code != CURLE_OK) {
    return Error{ErrorCode::kIoError, request + ": " + curl_easy_strerror(code) + " (curl code " +
                                          std::to_string(static_cast<int>(code)) + ")"}
        .with_hint(code == CURLE_OPERATION_TIMEDOUT
                       ? "it did not answer in full within " + std::to_string(timeout.count()) +
                             " ms: is that a Pushgateway, and is it well?"
                       : "nothing answered: is the Pushgateway running there?");
  }
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    return Error{ErrorCode::kIoError, request + " answered HTTP " + std::to_string(status)}
        .with_hint(status >= 300 && status < 400
                       ? "a redirect is not followed: give --pushgateway the gateway's own address"
                       : "");
  }
  return std::move(answer.body);
}

// The path segment of a grouping key's label (values are grouping_value()s: no escaping).
std::string group_path(const PushGroup& group) {
  std::string path = "/metrics/job/" + grouping_value(group.job);
  for (const auto& [label, value] : group.labels) path += "/" + label + "/" + grouping_value(value);
  return path;
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
  auto base = pushgateway_base(group.url);
  if (!base.ok()) return std::move(base).take_error();
  auto body = http_request("GET", base.value() + "/api/v1/metrics", "", timeout);
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

Status push_group(const PushGroup& group, const std::shared_ptr<prometheus::Registry>& registry,
                  std::chrono::milliseconds timeout) {
  auto base = pushgateway_base(group.url);
  if (!base.ok()) return std::move(base).take_error();
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  auto pushed = http_request("PUT", base.value() + group_path(group), text, timeout);
  if (!pushed.ok()) {
    Error error = std::move(pushed).take_error();
    error.message = "the push of " + group.describe() + ": " + error.message;
    return error;
  }
  return {};
}

}  // namespace faultline::reports
