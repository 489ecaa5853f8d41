#include "faultline/harness/scenario/step_ops.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <set>
#include <thread>

#include "faultline/core/hex.hpp"
#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/json.hpp"
#include "faultline/transports/memory_provider.hpp"

namespace faultline::harness {

StepResult met(std::string note) { return {true, Verdict::kPass, "", "", std::move(note), ""}; }

StepResult failed(std::string expected, std::string observed, std::string note, std::string hint) {
  return {false,           Verdict::kFail, std::move(expected), std::move(observed),
          std::move(note), std::move(hint)};
}

StepResult broken(const Error& error) {
  return {false, Verdict::kError, "", error.describe(), "", error.hint};
}

StepResult broken(std::string text) {
  return broken(Error{ErrorCode::kInvalidArgument, std::move(text)});
}

namespace {

using nlohmann::json;
using transports::Completion;
using transports::CompletionStatus;
using transports::Opcode;
using transports::Segment;

std::string describe_expectation(const json& expect) {
  std::string text = "an error " + expect.at("error").get<std::string>();
  if (expect.contains("errno")) text += " with errno " + expect.at("errno").dump();
  const json parts = expect.value("contains", json::array());
  for (const auto& part : parts) text += " naming \"" + part.get<std::string>() + "\"";
  return text;
}

}  // namespace

StepResult judge_status(const json& step, const Status& status, const std::string& what,
                        const std::string& success_note) {
  if (!step.contains("expect")) {
    if (status.ok()) return met(success_note);
    return failed(what + " succeeds", status.error().describe(), "",
                  status.error().hint.empty() ? "" : status.error().hint);
  }
  const json& expect = step.at("expect");
  const std::string expected = what + " fails with " + describe_expectation(expect);
  if (status.ok()) return failed(expected, what + " succeeded: " + success_note);
  const Error& error = status.error();
  const std::string text = error.describe();
  const std::string wanted = expect.at("error");
  if (wanted != "any" && wanted != std::string(to_string(error.code))) {
    return failed(expected, std::string(to_string(error.code)) + ": " + text);
  }
  if (expect.contains("errno") && expect.at("errno") != error.sys_errno) {
    return failed(expected, "errno " + std::to_string(error.sys_errno) + ": " + text);
  }
  const json parts = expect.value("contains", json::array());
  for (const auto& part : parts) {
    if (text.find(part.get<std::string>()) == std::string::npos)
      return failed(expected, "an error not naming \"" + part.get<std::string>() + "\": " + text);
  }
  return met("failed as expected: " + text);
}

namespace {

StepResult judge(const json& step, const Status& status, const std::string& what,
                 const std::string& success_note) {
  return judge_status(step, status, what, success_note);
}

Result<std::vector<Segment>> segments_of(StepState& state, const json& list) {
  std::vector<Segment> segments;
  for (const auto& entry : list) {
    const std::string name = entry.at("buffer");
    auto found = state.buffers.find(name);
    if (found == state.buffers.end())
      return Error{ErrorCode::kInvalidArgument, "no buffer \"" + name + "\" registered"};
    const transports::RegisteredBuffer& buffer = found->second;
    const uint64_t offset = entry.value("offset", uint64_t{0});
    const uint64_t length =
        entry.value("length", buffer.length > offset ? buffer.length - offset : 0);
    if (offset + length > buffer.length) {
      return Error{ErrorCode::kInvalidArgument, "segment [" + std::to_string(offset) + ", " +
                                                    std::to_string(offset + length) +
                                                    ") lies outside buffer \"" + name + "\" of " +
                                                    std::to_string(buffer.length) + " bytes"};
    }
    segments.push_back(buffer.segment(offset, length));
  }
  return segments;
}

std::string size_of(const std::vector<Segment>& segments) {
  size_t bytes = 0;
  for (const auto& segment : segments) bytes += segment.length;
  return std::to_string(segments.size()) + " segment" + (segments.size() == 1 ? "" : "s") + ", " +
         std::to_string(bytes) + " B";
}

}  // namespace

transports::EndpointConfig endpoint_config_of(const json& step,
                                              transports::EndpointConfig defaults) {
  transports::EndpointConfig config = std::move(defaults);
  const json options = step.value("config", json::object());
  config.send_depth = options.value("send_depth", config.send_depth);
  config.recv_depth = options.value("recv_depth", config.recv_depth);
  config.cq_depth = options.value("cq_depth", config.cq_depth);
  config.max_send_sge = options.value("max_send_sge", config.max_send_sge);
  config.max_recv_sge = options.value("max_recv_sge", config.max_recv_sge);
  config.max_inline = options.value("max_inline", config.max_inline);
  config.rnr_retry = options.value("rnr_retry", config.rnr_retry);
  config.retry_count = options.value("retry_count", config.retry_count);
  config.timeout = options.value("timeout", config.timeout);
  config.min_rnr_timer = options.value("min_rnr_timer", config.min_rnr_timer);
  if (options.contains("gid")) {
    const json& gid = options.at("gid");
    config.gid = gid.is_string() ? gid.get<std::string>() : gid.dump();
  }
  config.path_mtu = options.value("path_mtu", config.path_mtu);
  config.raw = options.value("raw", config.raw);
  const json derivations = step.value("derivations", json::object());
  for (const auto& [field, derivation] : derivations.items())
    config.derivations[field] = derivation;
  return config;
}

namespace {

StepResult need_endpoint(const StepState& state, const std::string& op) {
  if (state.endpoint) return met("");
  return broken(op + " before create_endpoint (or after close_endpoint)");
}

StepResult create_endpoint(StepState& state, const json& step) {
  const transports::EndpointConfig config = endpoint_config_of(step);
  auto endpoint = state.device->create_endpoint(config);
  Status status = endpoint.ok() ? Status{} : Status{endpoint.error()};
  std::string note;
  if (endpoint.ok()) {
    state.endpoint = std::move(endpoint).value();
    char qp[16];
    std::snprintf(qp, sizeof qp, "0x%x", state.endpoint->qp_num());
    note = "endpoint qp " + std::string(qp) + " send_depth " + std::to_string(config.send_depth) +
           " max_inline " + std::to_string(state.endpoint->config().max_inline);
  }
  return judge(step, status, "create_endpoint", note);
}

uint64_t registered_memory(const json& step) { return step.value("bytes", uint64_t{0}); }

StepResult register_buffer(StepState& state, const json& step) {
  const std::string name = step.at("buffer");
  const size_t bytes = step.at("bytes");
  uint32_t access = 0;
  const json rights =
      step.value("access", json::array({"local_write", "remote_write", "remote_read"}));
  for (const auto& right : rights) {
    if (right == "local_write") access |= transports::kAccessLocalWrite;
    if (right == "remote_write") access |= transports::kAccessRemoteWrite;
    if (right == "remote_read") access |= transports::kAccessRemoteRead;
  }
  auto buffer = transports::RegisteredBuffer::allocate(*state.device, bytes, access);
  if (!buffer.ok()) return failed("register " + name + " succeeds", buffer.error().describe());
  // Zero-filled already; a pattern is written after registration (the region covers it).
  const json fill = step.value("fill", json("zero"));
  if (fill.is_number_unsigned())
    transports::fill_pattern(buffer.value().data(), bytes, fill.get<unsigned>());
  state.buffers[name] = std::move(buffer).value();
  return met("registered " + name + " (" + std::to_string(bytes) + " B)");
}

StepResult connect(StepState& state, const json& step) {
  if (auto missing = need_endpoint(state, "connect"); !missing.met) return missing;
  json buffers = json::object();
  for (const auto& [name, buffer] : state.buffers) buffers[name] = buffer.region->remote();
  const auto own_address = state.endpoint->address();
  json info = FirstContact::own_info(state.device->info().name);
  info["address"] = to_hex(own_address);
  info["buffers"] = buffers;
  auto peer = state.link->exchange(info);
  if (!peer.ok()) return broken(peer.error());
  try {
    for (const auto& [name, remote] : peer->at("buffers").items())
      state.peer_buffers[name] = remote.get<transports::RemoteBuffer>();
    const auto address = from_hex(peer->at("address").get<std::string>());
    state.first_contact.joined(own_address, address, state.device->info().name, *peer);
    return judge(step, state.endpoint->connect(address), "connect", "connected to the peer");
  } catch (const json::exception& e) {
    return broken(Error{ErrorCode::kProtocolViolation, std::string("peer info: ") + e.what()});
  }
}

// Posts `request` `repeat` times (wr_id, wr_id + 1, ...); the first failure ends it.
Status post_repeated(StepState& state, const json& step, transports::WorkRequest request) {
  const uint64_t repeat = step.value("repeat", uint64_t{1});
  for (uint64_t i = 0; i < repeat; ++i, ++request.wr_id) {
    Status posted = state.endpoint->post_send(request);
    if (!posted.ok() && repeat > 1) {
      Error error = std::move(posted).take_error();
      error.message =
          "post " + std::to_string(i + 1) + " of " + std::to_string(repeat) + ": " + error.message;
      return error;
    }
    FAULTLINE_RETURN_IF_ERROR(posted);
  }
  return {};
}

std::string posts_of(const json& step) {
  const uint64_t repeat = step.value("repeat", uint64_t{1});
  return repeat > 1 ? std::to_string(repeat) + " x " : "";
}

StepResult post_recv(StepState& state, const json& step) {
  if (auto missing = need_endpoint(state, "post_recv"); !missing.met) return missing;
  auto segments = segments_of(state, step.at("segments"));
  if (!segments.ok()) return broken(segments.error());
  const Status status = state.endpoint->post_recv({step.at("wr_id"), segments.value()});
  return judge(step, status, "post_recv", "posted " + size_of(segments.value()));
}

StepResult post_send(StepState& state, const json& step) {
  if (auto missing = need_endpoint(state, "post_send"); !missing.met) return missing;
  auto segments = segments_of(state, step.at("segments"));
  if (!segments.ok()) return broken(segments.error());
  transports::WorkRequest request;
  request.wr_id = step.at("wr_id");
  request.op = step.contains("imm") ? Opcode::kSendWithImm : Opcode::kSend;
  request.segments = segments.value();
  request.inline_data = step.value("inline", false);
  request.signaled = step.value("signaled", true);
  if (step.contains("imm")) request.imm = step.at("imm").get<uint32_t>();
  return judge(step, post_repeated(state, step, request), "post_send",
               "posted " + posts_of(step) + size_of(segments.value()) +
                   (request.inline_data ? " inline" : ""));
}

StepResult rdma(StepState& state, const json& step, bool write) {
  const std::string op = write ? "write" : "read";
  if (auto missing = need_endpoint(state, op); !missing.met) return missing;
  auto segments = segments_of(state, step.at("segments"));
  if (!segments.ok()) return broken(segments.error());
  const json& target = step.at("remote");
  const std::string name = target.at("buffer");
  auto peer = state.peer_buffers.find(name);
  if (peer == state.peer_buffers.end())
    return broken("the peer has no buffer \"" + name + "\" (was it registered before connect?)");
  transports::RemoteBuffer remote = peer->second;
  const uint64_t offset = target.value("offset", uint64_t{0});
  remote.addr += offset;
  remote.length = target.value("length", remote.length > offset ? remote.length - offset : 0);
  if (target.value("key", "valid") == "wrong") remote.key ^= 0x5a5a5a5aULL;
  transports::WorkRequest request;
  request.wr_id = step.at("wr_id");
  request.op = !write ? Opcode::kRdmaRead
                      : (step.contains("imm") ? Opcode::kRdmaWriteWithImm : Opcode::kRdmaWrite);
  request.segments = segments.value();
  request.inline_data = step.value("inline", false);
  if (step.contains("imm")) request.imm = step.at("imm").get<uint32_t>();
  request.remote = remote;
  return judge(step, post_repeated(state, step, request), op,
               "posted " + posts_of(step) + op + " of " + size_of(segments.value()) + " to peer " +
                   name + (target.value("key", "valid") == "wrong" ? " with a wrong key" : ""));
}

// The next completion: one reaped while waiting for the peer, else one polled.
Result<size_t> next_completion(StepState& state, Completion& completion,
                               std::chrono::milliseconds timeout) {
  if (!state.reaped.empty()) {
    completion = std::move(state.reaped.front());
    state.reaped.pop_front();
    return size_t{1};
  }
  return state.endpoint->poll({&completion, 1}, timeout);
}

// A poll that must fail (a CQ overrun): completions before the error are taken and counted.
StepResult poll_until_error(StepState& state, const json& step, std::chrono::milliseconds timeout) {
  size_t taken = 0;
  for (;;) {
    Completion completion;
    auto polled = next_completion(state, completion, timeout);
    const std::string before = std::to_string(taken) + " completion(s) before it";
    if (!polled.ok()) {
      StepResult result = judge(step, polled.error(), "poll", "");
      result.note += " (" + before + ")";
      return result;
    }
    if (polled.value() == 0) {
      return judge(step, Status{}, "poll",
                   std::to_string(taken) + " completion(s), then none within " +
                       std::to_string(timeout.count()) + " ms and no error");
    }
    ++taken;
  }
}

// Whether `completion` is what `expect` asks for, the `index`-th of the step (wr_id counts up).
bool matches(const Completion& completion, const json& expect,
             const std::vector<std::string>& statuses, uint64_t index) {
  return std::find(statuses.begin(), statuses.end(), to_string(completion.status)) !=
             statuses.end() &&
         (!expect.contains("opcode") || to_string(completion.op) == expect.at("opcode")) &&
         (!expect.contains("wr_id") ||
          completion.wr_id == expect.at("wr_id").get<uint64_t>() + index) &&
         (!expect.contains("byte_len") || completion.byte_len == expect.at("byte_len")) &&
         (!expect.contains("imm") || (completion.imm && *completion.imm == expect.at("imm")));
}

StepResult poll(StepState& state, const json& step) {
  if (auto missing = need_endpoint(state, "poll"); !missing.met) return missing;
  const json expect = step.value("expect", json::object());
  const auto timeout = std::chrono::milliseconds(step.value("timeout_ms", 5000));
  if (expect.contains("error")) return poll_until_error(state, step, timeout);
  const uint64_t count = step.value("count", uint64_t{1});
  // One status, or the statuses a conformant stack may show (they differ by design).
  std::vector<std::string> statuses = {"SUCCESS"};
  if (expect.contains("status")) {
    const json& wanted = expect.at("status");
    statuses = wanted.is_array() ? wanted.get<std::vector<std::string>>()
                                 : std::vector<std::string>{wanted.get<std::string>()};
  }
  std::string status_text;
  for (const auto& status : statuses) status_text += (status_text.empty() ? "" : " or ") + status;
  std::string expected = (count > 1 ? std::to_string(count) + " x " : std::string()) +
                         expect.value("opcode", std::string("a completion")) + " " + status_text;
  if (expect.contains("wr_id"))
    expected += " wr_id " + expect.at("wr_id").dump() + (count > 1 ? " and up" : "");
  if (expect.contains("byte_len")) expected += " of " + expect.at("byte_len").dump() + " bytes";
  if (expect.contains("imm")) expected += " imm " + expect.at("imm").dump();
  std::string last;
  for (uint64_t index = 0; index < count; ++index) {
    Completion completion;
    auto polled = next_completion(state, completion, timeout);
    const std::string so_far =
        count > 1 ? " (after " + std::to_string(index) + " of " + std::to_string(count) + ")" : "";
    if (!polled.ok()) return failed("poll returns completions", polled.error().describe() + so_far);
    if (expect.value("nothing", false)) {
      if (polled.value() == 0)
        return met("no completion within " + std::to_string(timeout.count()) + " ms, as expected");
      return failed("no completion within " + std::to_string(timeout.count()) + " ms",
                    completion.describe());
    }
    // Until a completion succeeds, a silence or an error may be the path itself.
    const FirstContact& first = state.first_contact;
    if (polled.value() == 0) {
      const std::string hint = first.hint();
      return failed(
          expected,
          "no completion within " + std::to_string(timeout.count()) + " ms" + so_far + first.note(),
          "",
          !hint.empty() ? hint
                        : "a completion that never comes: a lost or dropped "
                          "completion, or a peer that never sent");
    }
    if (!matches(completion, expect, statuses, index)) {
      if (completion.ok()) return failed(expected, completion.describe() + so_far);
      return failed(expected, completion.describe() + so_far + first.note(), "", first.hint());
    }
    if (completion.ok()) state.first_contact.reached();
    last = completion.describe();
  }
  return met(count > 1 ? std::to_string(count) + " completions as expected; the last: " + last
                       : last);
}

StepResult check_data(StepState& state, const json& step) {
  const std::string name = step.at("buffer");
  auto found = state.buffers.find(name);
  if (found == state.buffers.end()) return broken("no buffer \"" + name + "\" registered");
  const transports::RegisteredBuffer& buffer = found->second;
  const uint64_t offset = step.value("offset", uint64_t{0});
  const uint64_t length = step.value("length", buffer.length > offset ? buffer.length - offset : 0);
  if (offset + length > buffer.length) return broken("check_data range outside buffer " + name);
  std::vector<std::byte> expected_bytes(buffer.length, std::byte{0});
  const json& expect = step.at("expect");
  if (expect.is_number_unsigned())
    transports::fill_pattern(expected_bytes.data(), buffer.length, expect.get<unsigned>());
  const std::string what = expect.is_number_unsigned()
                               ? "the bytes of pattern " + expect.dump()
                               : std::string("zero bytes (nothing delivered)");
  for (uint64_t i = offset; i < offset + length; ++i) {
    if (buffer.memory[i] != expected_bytes[i]) {
      char observed[96];
      std::snprintf(observed, sizeof observed, "byte %llu of %s is 0x%02x, expected 0x%02x",
                    static_cast<unsigned long long>(i), name.c_str(),
                    std::to_integer<unsigned>(buffer.memory[i]),
                    std::to_integer<unsigned>(expected_bytes[i]));
      return failed(name + "[" + std::to_string(offset) + ", " + std::to_string(offset + length) +
                        ") holds " + what,
                    observed);
    }
  }
  const auto digest =
      to_hex(std::span(buffer.memory.get() + offset, length).first(std::min<size_t>(length, 8)));
  return met(name + "[" + std::to_string(offset) + ", " + std::to_string(offset + length) +
             ") holds " + what + " (first bytes " + digest + ")");
}

StepResult modify_to_error(StepState& state, const json& step) {
  if (auto missing = need_endpoint(state, "modify_to_error"); !missing.met) return missing;
  return judge(step, state.endpoint->modify_to_error(), "modify_to_error",
               "endpoint moved to the error state");
}

StepResult close_endpoint(StepState& state, const json& /*step*/) {
  // The engines on the endpoint go with it (after it: their memory may still be in use by
  // its outstanding work); a later connect starts them afresh.
  state.endpoint.reset();
  for (auto& [name, session] : state.sessions) session->endpoint_closed();
  return met("endpoint destroyed, as when its process dies");
}

// The process holding the endpoint dies by SIGKILL once its result is sent (the runner stops
// here; the scenario child raises the signal): its QP, registrations and connection go the
// way a crash takes them.
StepResult die(StepState& state, const json& /*step*/) {
  state.dies_by = SIGKILL;
  return met("dies by SIGKILL, as the scenario asks (pid " + std::to_string(getpid()) + ")");
}

StepResult barrier(StepState& state, const json& step) {
  const std::string name = step.at("name");
  if (Status reached = state.link->barrier(name); !reached.ok()) return broken(reached.error());
  return met("barrier " + name);
}

StepResult sleep_for(StepState& state, const json& step) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(step.at("ms").get<int64_t>());
  // `progress: false` stalls the side like a busy application thread: nothing is reaped.
  const bool drive = step.value("progress", true);
  while (std::chrono::steady_clock::now() < until) {
    if (drive) progress(state);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return met("slept " + step.at("ms").dump() + " ms" + (drive ? "" : " without driving progress"));
}

}  // namespace

StepState::~StepState() {
  for (auto& [name, session] : sessions) session->close_own_endpoints();
  endpoint.reset();
  sessions.clear();
  buffers.clear();
}

void progress(StepState& state) {
  bool endpoint_owned = false;
  for (auto& [name, session] : state.sessions) endpoint_owned |= session->progress();
  if (endpoint_owned || !state.endpoint) return;
  Completion completions[8];
  auto polled = state.endpoint->poll(completions, std::chrono::milliseconds(0));
  if (polled.ok()) {  // a failure of the poll itself is for the next poll step to report
    for (size_t i = 0; i < polled.value(); ++i) state.reaped.push_back(std::move(completions[i]));
  }
}

const StepOps& step_ops() {
  static const StepOps ops = [] {
    StepOps all = {
        {"create_endpoint", {create_endpoint, {}}},
        {"register", {register_buffer, {}, registered_memory}},
        {"connect", {connect, {}}},
        {"post_recv", {post_recv, {}}},
        {"post_send", {post_send, {}}},
        {"write", {[](StepState& s, const json& step) { return rdma(s, step, true); }, {}}},
        {"read", {[](StepState& s, const json& step) { return rdma(s, step, false); }, {}}},
        {"poll", {poll, {}}},
        {"check_data", {check_data, {}}},
        {"modify_to_error", {modify_to_error, {}}},
        {"close_endpoint", {close_endpoint, {}}},
        {"barrier", {barrier, {}}},
        {"die", {die, {}}},
        {"sleep", {sleep_for, {}}},
    };
    add_protocol_ops(all);
    return all;
  }();
  return ops;
}

std::vector<std::string> capabilities_needed(const json& document, const std::string& role) {
  std::set<std::string> needed;
  if (document.contains("requires")) {
    for (const auto& capability : document.at("requires").value("capabilities", json::array()))
      needed.insert(capability.get<std::string>());
  }
  for (const auto& step : document.at("steps")) {
    if (step.contains("role") && step.at("role") != role) continue;
    const std::string op = step.at("op");
    if (op == "write") needed.insert(step.contains("imm") ? "write_with_imm" : "rdma_write");
    if (op == "read") needed.insert("rdma_read");
    if (op == "post_send" && step.contains("imm")) needed.insert("send_with_imm");
    if (step.value("inline", false)) needed.insert("inline_send");
    if (auto entry = step_ops().find(op); entry != step_ops().end())
      needed.insert(entry->second.capabilities.begin(), entry->second.capabilities.end());
  }
  return {needed.begin(), needed.end()};
}

}  // namespace faultline::harness
