#include "fault_endpoint.hpp"

#include <algorithm>
#include <cstring>

#include "faultline/transports/fault/segment_split.hpp"

namespace faultline::transports::fault {

namespace {

std::string ordinal(uint64_t n) {
  const uint64_t tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1              ? "st"
                       : n % 10 == 2              ? "nd"
                       : n % 10 == 3              ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

uint64_t total_length(std::span<const Segment> segments) {
  uint64_t length = 0;
  for (const Segment& segment : segments) length += segment.length;
  return length;
}

std::byte* segment_address(const Segment& segment) { return static_cast<std::byte*>(segment.addr); }
uint64_t segment_length(const Segment& segment) { return segment.length; }

bool is_inline_capable(Opcode op) {
  return op == Opcode::kSend || op == Opcode::kSendWithImm || op == Opcode::kRdmaWrite ||
         op == Opcode::kRdmaWriteWithImm;
}

}  // namespace

std::pair<uint64_t, bool> FaultCounts::next_match(size_t index, const FaultSpec& fault) {
  std::lock_guard lock(mutex_);
  auto random = random_.try_emplace(index, seed_ * 0x9e3779b97f4a7c15ULL + index + 1).first;
  const uint64_t match = ++matches_[index];
  return {match, fault.when.fires(match, random->second)};
}

FaultEndpoint::FaultEndpoint(std::unique_ptr<Endpoint> inner, const FaultPlan& plan,
                             std::shared_ptr<FaultLog> log,
                             std::shared_ptr<std::vector<Completion>> stale,
                             std::shared_ptr<FaultCounts> counts)
    : inner_(std::move(inner)),
      counts_(std::move(counts)),
      log_(std::move(log)),
      replay_after_connect_(std::move(stale)) {
  for (size_t i = 0; i < plan.faults.size(); ++i) {
    const FaultSpec& fault = plan.faults[i];
    if (fault.info().effect.any()) completions_.emplace_back(i, fault);
    if (fault.kind == FaultKind::kFailPost || fault.kind == FaultKind::kSegmentCount ||
        fault.kind == FaultKind::kRewriteField)
      post_faults_.emplace_back(i, fault);
    if (fault.kind == FaultKind::kInline) inline_mode_ = fault.inline_mode;
    reuse_qp_number_ = reuse_qp_number_ || fault.reuse_qp_number;
    keeps_local_buffers_ = keeps_local_buffers_ || fault.data == DataAction::kScribble;
  }
}

void FaultEndpoint::record(std::string kind, std::string detail) {
  log_->push_back({std::move(kind), std::move(detail)});
}

Status FaultEndpoint::connect(std::span<const std::byte> peer_address) {
  Status connected = inner_->connect(peer_address);
  for (Completion& stale : *replay_after_connect_) {
    if (reuse_qp_number_) stale.qp_num = inner_->qp_num();
    record("replay_completion", "stale " + stale.describe() + " returned again after reconnect" +
                                    (reuse_qp_number_ ? " on the reused qp number" : ""));
    ready_.push_back(std::move(stale));
  }
  replay_after_connect_->clear();
  return connected;
}

Status FaultEndpoint::apply_post_faults(Side post, Opcode op, uint64_t wr_id,
                                        std::span<const Segment>& segments,
                                        std::vector<Segment>& changed) {
  const char* call = post == Side::kRecv ? "post_recv" : "post_send";
  for (const auto& [index, fault] : post_faults_) {
    // A fail_post without `post` fails a send, as scenario files have always read it.
    const Side faulted = fault.side == Side::kRecv ? Side::kRecv : Side::kSend;
    if (faulted != post || (fault.opcode && *fault.opcode != op)) continue;
    if (fault.kind == FaultKind::kRewriteField &&
        !fault.field.matches(total_length(segments),
                             read_field(fault.field, segments, segment_address, segment_length)))
      continue;
    const auto [match, fires] = counts_->next_match(index, fault);
    if (!fires) continue;
    if (fault.kind == FaultKind::kRewriteField) {
      // In the engine's own message buffer, before the post: as if it had built the field so.
      const auto [before, after] =
          *rewrite_field(fault.field, segments, segment_address, segment_length);
      record("rewrite_field", std::string(call) + " #" + std::to_string(match) + " wr_id " +
                                  hex(wr_id) + ": the " + std::to_string(fault.field.width) +
                                  "-byte field at offset " + std::to_string(fault.field.offset) +
                                  " posted as " + std::to_string(after) + " (was " +
                                  std::to_string(before) + ")");
      continue;
    }
    if (fault.kind == FaultKind::kSegmentCount) {
      changed =
          fault.segment_mode == SegmentMode::kFewer
              ? std::vector<Segment>(segments.begin(), segments.end() - (segments.empty() ? 0 : 1))
              : split_pieces(
                    segments, fault.split_into, [](const Segment& piece) { return piece.length; },
                    [](const Segment& piece, uint32_t first) {
                      return std::pair{Segment{piece.addr, first, piece.region},
                                       Segment{static_cast<std::byte*>(piece.addr) + first,
                                               piece.length - first, piece.region}};
                    });
      record("segment_count", std::string(call) + " #" + std::to_string(match) + " wr_id " +
                                  hex(wr_id) + " posted with " + std::to_string(changed.size()) +
                                  " segments instead of " + std::to_string(segments.size()));
      segments = changed;
      continue;
    }
    record("fail_post", std::string(call) + " #" + std::to_string(match) + " wr_id " + hex(wr_id) +
                            " failed with errno " + std::to_string(fault.error_number));
    Error error = errno_error(call, fault.error_number,
                              "injected fault: the " + ordinal(match) + " " + call + " fails");
    error.where.qp = inner_->qp_num();
    return std::move(error).with_hint("a fail_post fault of the scenario fired");
  }
  return {};
}

Status FaultEndpoint::post_send(const WorkRequest& request) {
  WorkRequest changed = request;
  std::vector<Segment> segments;
  FAULTLINE_RETURN_IF_ERROR(
      apply_post_faults(Side::kSend, request.op, request.wr_id, changed.segments, segments));
  if (is_inline_capable(request.op)) {
    if (inline_mode_ == InlineMode::kOff && request.inline_data) {
      changed.inline_data = false;
      record("inline_off", "wr_id " + hex(request.wr_id) + " posted without inline");
    } else if (inline_mode_ == InlineMode::kAboveLimit && !request.inline_data) {
      changed.inline_data = true;
      record("inline_forced", "wr_id " + hex(request.wr_id) + " posted inline");
    } else if (const uint32_t room = inner_->config().max_inline;
               inline_mode_ == InlineMode::kForce && !request.inline_data && room > 0 &&
               total_length(request.segments) <= room) {
      changed.inline_data = true;
      record("inline_forced", "wr_id " + hex(request.wr_id) + " posted inline, within " +
                                  std::to_string(room) + " bytes of inline room");
    }
  }
  if (keeps_local_buffers_ && request.op == Opcode::kRdmaRead) {
    local_buffers_[request.wr_id].assign(changed.segments.begin(), changed.segments.end());
  }
  return inner_->post_send(changed);
}

Status FaultEndpoint::post_recv(const RecvRequest& request) {
  RecvRequest changed = request;
  std::vector<Segment> segments;
  FAULTLINE_RETURN_IF_ERROR(
      apply_post_faults(Side::kRecv, Opcode::kRecv, request.wr_id, changed.segments, segments));
  if (keeps_local_buffers_)
    local_buffers_[request.wr_id].assign(changed.segments.begin(), changed.segments.end());
  return inner_->post_recv(changed);
}

bool FaultEndpoint::any_fault_for(Opcode op) const {
  return std::any_of(completions_.begin(), completions_.end(), [op](const auto& indexed) {
    return !indexed.second.opcode || *indexed.second.opcode == op;
  });
}

void FaultEndpoint::scribble(const Completion& completion, std::string& detail) {
  auto found = local_buffers_.find(completion.wr_id);
  if (found == local_buffers_.end()) {
    detail += ", nothing local to scribble";
    return;
  }
  size_t bytes = 0;
  for (const Segment& segment : found->second) {
    std::memset(segment.addr, 0xdb, segment.length);
    bytes += segment.length;
  }
  detail += ", " + std::to_string(bytes) + " local bytes scribbled";
}

void FaultEndpoint::apply(Completion completion) {
  bool dropped = false;
  bool duplicated = false;
  std::optional<Clock::time_point> due;
  for (const auto& [index, fault] : completions_) {
    if (fault.opcode && *fault.opcode != completion.op) continue;
    const auto [match, fires] = counts_->next_match(index, fault);
    if (!fires) continue;
    std::string detail = std::string(to_string(completion.op)) + " wr_id " + hex(completion.wr_id) +
                         " (" + ordinal(match) + " match)";
    const CompletionEffect& effect = fault.info().effect;
    if (effect.rewrite_status) {
      detail += ": " + std::string(to_string(completion.status)) + " -> " +
                std::string(to_string(fault.status));
      completion.status = fault.status;
      completion.native_status = 0;
      completion.vendor_err = 0;
      completion.native_text = "injected by faultline";
      if (fault.data == DataAction::kScribble) scribble(completion, detail);
    }
    dropped = dropped || effect.drop;
    duplicated = duplicated || effect.duplicate;
    if (effect.delay) {
      due = Clock::now() + fault.delay;
      detail += " held " + std::to_string(fault.delay.count()) + " ms";
    }
    if (effect.replay) replay_after_connect_->push_back(completion);
    record(std::string(fault.kind_name()), detail);
  }
  if (keeps_local_buffers_) local_buffers_.erase(completion.wr_id);
  if (dropped) return;
  if (due) {
    delayed_.push_back({*due, std::move(completion)});
    return;
  }
  if (duplicated) ready_.push_back(completion);
  ready_.push_back(std::move(completion));
}

size_t FaultEndpoint::take_ready(std::span<Completion> out) {
  size_t n = 0;
  while (n < out.size() && !ready_.empty()) {
    out[n++] = std::move(ready_.front());
    ready_.pop_front();
  }
  return n;
}

Result<size_t> FaultEndpoint::poll(std::span<Completion> out, std::chrono::milliseconds timeout) {
  using std::chrono::milliseconds;
  // The hot path, a spinning caller with nothing held back: one inner poll straight into
  // `out`, no clock, and completions no fault applies to are handed over untouched.
  if (timeout.count() == 0 && delayed_.empty() && ready_.empty()) {
    auto polled = inner_->poll(out, milliseconds(0));
    if (!polled.ok()) return polled;
    const size_t n = polled.value();
    if (std::none_of(out.begin(), out.begin() + static_cast<ptrdiff_t>(n),
                     [this](const Completion& c) { return any_fault_for(c.op); })) {
      if (keeps_local_buffers_)
        for (size_t i = 0; i < n; ++i) local_buffers_.erase(out[i].wr_id);
      return n;
    }
    for (size_t i = 0; i < n; ++i) apply(std::move(out[i]));
    return take_ready(out);
  }
  batch_.resize(std::max<size_t>(out.size(), 1));
  const auto deadline = Clock::now() + timeout;
  for (bool polled_once = false;; polled_once = true) {
    const auto now = Clock::now();
    for (auto it = delayed_.begin(); it != delayed_.end();) {
      if (it->due <= now) {
        ready_.push_back(std::move(it->completion));
        it = delayed_.erase(it);
      } else {
        ++it;
      }
    }
    if (!ready_.empty()) return take_ready(out);
    if (polled_once && now >= deadline) return size_t{0};
    // Wait no longer than the caller allows, and wake for the next held-back completion.
    auto wait = std::max(std::chrono::duration_cast<milliseconds>(deadline - now), milliseconds(0));
    for (const Delayed& held : delayed_) {
      wait = std::min(wait, std::max(std::chrono::duration_cast<milliseconds>(held.due - now),
                                     milliseconds(0)));
    }
    auto polled = inner_->poll(batch_, wait);
    if (!polled.ok()) return polled;
    for (size_t i = 0; i < polled.value(); ++i) apply(std::move(batch_[i]));
  }
}

}  // namespace faultline::transports::fault
