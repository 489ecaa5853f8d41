// The tagged step operations: tagged.send, tagged.recv, tagged.group_recv and
// tagged.progress, over the tagged engine of this side. The k-th message of a tag carries a
// pattern both sides compute from (tag, k), so every buffer is checked for exactly its own
// message: a message delivered to the wrong buffer or out of per-tag order shows as a data
// mismatch.
#include <chrono>
#include <string>
#include <thread>

#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/protocols/tagged/tagged_engine.hpp"
#include "faultline/transports/data_pattern.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;
using protocols::tagged::SendPath;
using protocols::tagged::TaggedBuffer;
using protocols::tagged::TaggedEngine;
using RequestId = TaggedEngine::RequestId;

unsigned pattern_seed(uint64_t tag, uint64_t seq) {
  return static_cast<unsigned>(tag * 7919 + seq * 31 + 1);
}

// The tagged engine of one side, made by its first step (after connect: it posts its
// receives) with the scenario's `tagged` options, and how many messages of each tag this
// side sent and received so far.
class TaggedSession final : public ProtocolSession {
 public:
  explicit TaggedSession(StepState& state)
      : state_(state), options_(state.document->value("tagged", json::object())) {}

  Result<TaggedEngine*> engine() {
    if (engine_) return engine_.get();
    if (!state_.endpoint)
      return Error{ErrorCode::kInvalidArgument, "a tagged step before create_endpoint and connect"};
    protocols::tagged::TaggedOptions options;
    options.side = state_.role;
    options.eager_threshold = options_.value("eager_threshold", options.eager_threshold);
    options.eager_queue_depth = options_.value("eager_queue_depth", options.eager_queue_depth);
    options.receive_slots = options_.value("receive_slots", options.receive_slots);
    options.slot_without_header = options_.value("mutation", "") == "slot_without_header";
    options.timeout =
        std::chrono::milliseconds(options_.value("timeout_ms", options.timeout.count()));
    auto made = TaggedEngine::create(*state_.device, *state_.endpoint, options);
    if (!made.ok()) return std::move(made).take_error();
    engine_ = std::move(made).value();
    return engine_.get();
  }

  const json& options() const { return options_; }
  std::map<uint64_t, uint64_t> sent;
  std::map<uint64_t, uint64_t> received;

  bool progress() override {
    if (!engine_) return false;
    (void)engine_->progress();  // a failure stays in the engine for its next step
    return true;
  }
  void endpoint_closed() override {
    engine_.reset();
    parked_.clear();
  }

  /// Ends a step's requests, however the step went: finished ones are released; when some are
  /// not (a receive that timed out, a send still in flight), the step's buffers are kept as
  /// long as the engine is, so a late message lands in them and never in freed memory.
  void settle(const std::vector<RequestId>& ids, std::vector<std::vector<std::byte>> buffers) {
    if (!engine_) return;
    if (engine_->release(ids) == 0) return;
    for (auto& buffer : buffers) parked_.push_back(std::move(buffer));
  }

 private:
  StepState& state_;
  json options_;
  // Declared before the engine: destroyed after it.
  std::vector<std::vector<std::byte>> parked_;
  std::unique_ptr<TaggedEngine> engine_;
};

TaggedSession& tagged_session(StepState& state) {
  return session_of<TaggedSession>(state, "tagged");
}

Result<TaggedEngine*> tagged_of(StepState& state) { return tagged_session(state).engine(); }

// One message of a step's list, `count` times over.
struct Message {
  uint64_t tag = 0;
  size_t bytes = 0;
  size_t capacity = 0;
  std::string path;  ///< "eager", "rendezvous" or "" (not checked)
};

std::vector<Message> expand(const json& list) {
  std::vector<Message> messages;
  for (const auto& entry : list) {
    Message message{entry.at("tag"), entry.at("bytes"), 0, entry.value("path", "")};
    message.capacity = entry.value("capacity", message.bytes);
    const size_t count = entry.value("count", 1);
    messages.insert(messages.end(), count, message);
  }
  return messages;
}

// What the engine did during one step (counts since `before`, the step's start), and its
// eager queue's high water since it was opened.
std::string stats_note(const TaggedEngine& engine, const protocols::tagged::TaggedStats& before) {
  const auto& now = engine.stats();
  auto grew = [](uint64_t after, uint64_t start) { return std::to_string(after - start); };
  return "this step: eager sent " + grew(now.eager_sent, before.eager_sent) + ", rendezvous sent " +
         grew(now.rendezvous_sent, before.rendezvous_sent) + ", eager received " +
         grew(now.eager_received, before.eager_received) + " (" +
         grew(now.unexpected, before.unexpected) + " before their receive), rendezvous received " +
         grew(now.rendezvous_received, before.rendezvous_received) + ", backoffs " +
         grew(now.backoffs, before.backoffs) + ", credit frames " +
         grew(now.credit_frames, before.credit_frames) + "; eager queue high water " +
         std::to_string(now.eager_queue_high_water) + " since open";
}

// Makes this side's engine and posts its receive slots; a barrier after it on both sides
// makes sure no frame is sent before the peer can take it.
StepResult tagged_open(StepState& state, const json& /*step*/) {
  auto engine = tagged_of(state);
  if (!engine.ok()) return failed("the tagged engine opens", engine.error().describe());
  const json& options = tagged_session(state).options();
  return met("tagged engine open: eager threshold " +
             std::to_string(options.value("eager_threshold", 8184)) + " bytes, receive slots " +
             std::to_string(options.value("receive_slots", 32)) + ", eager queue " +
             std::to_string(options.value("eager_queue_depth", 8)));
}

// What a finished tagged.send says: its status, and the path each message took where the step
// names one.
StepResult judge_sends(const json& step, TaggedEngine& engine, const std::vector<Message>& messages,
                       const std::vector<RequestId>& ids, const Status& status,
                       const protocols::tagged::TaggedStats& before) {
  const std::string what = "tagged.send of " + std::to_string(messages.size()) + " messages";
  StepResult result = judge_status(step, status, what, what + " done");
  result.note += " [" + stats_note(engine, before) + "]";
  if (!status.ok() || step.contains("expect")) return result;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (messages[i].path.empty()) continue;
    const bool eager = engine.path_of(ids[i]) == SendPath::kEager;
    if ((messages[i].path == "eager") != eager) {
      return failed("message " + std::to_string(i) + " (tag " + std::to_string(messages[i].tag) +
                        ", " + std::to_string(messages[i].bytes) + " bytes) goes " +
                        messages[i].path,
                    eager ? "eager" : "rendezvous", result.note);
    }
  }
  if (step.value("backs_off", false) && engine.stats().backoffs == before.backoffs) {
    return failed("the eager queue fills and the sender backs off", "it never did", result.note,
                  "send more messages than receive_slots + eager_queue_depth while the "
                  "receiver is not yet receiving");
  }
  return result;
}

StepResult tagged_send(StepState& state, const json& step) {
  auto engine = tagged_of(state);
  if (!engine.ok()) return broken(engine.error());
  const std::vector<Message> messages = expand(step.at("messages"));
  const protocols::tagged::TaggedStats before = engine.value()->stats();
  std::vector<std::vector<std::byte>> payloads;  // alive until the sends are done
  payloads.reserve(messages.size());
  std::vector<RequestId> ids;
  Status status;
  for (const Message& message : messages) {
    const uint64_t seq = tagged_session(state).sent[message.tag]++;
    payloads.emplace_back(message.bytes);
    transports::fill_pattern(payloads.back().data(), message.bytes, pattern_seed(message.tag, seq));
    auto id = engine.value()->send(message.tag, payloads.back());
    if (!id.ok()) {
      status = id.error();
      break;
    }
    ids.push_back(id.value());
  }
  // `wait: false` posts and goes on, as a sender that does not look at its completions: what
  // becomes of the messages shows on the receiver.
  const bool wait = step.value("wait", true);
  if (status.ok() && wait) status = engine.value()->wait(ids);
  StepResult result =
      wait ? judge_sends(step, *engine.value(), messages, ids, status, before)
           : judge_status(step, status, "tagged.send",
                          "posted " + std::to_string(ids.size()) + " messages, not waited for");
  // A rendezvous payload a send still reads stays alive with the engine.
  tagged_session(state).settle(ids, std::move(payloads));
  return result;
}

// One group of a receive step: its messages, their per-tag sequence numbers, its buffers.
struct PostedGroup {
  std::vector<Message> messages;
  std::vector<uint64_t> seqs;
  std::vector<std::vector<std::byte>> buffers;
  RequestId id = 0;
};

// What a finished receive step says: its status, then each buffer checked for its own message.
StepResult judge_receives(const json& step, TaggedEngine& engine,
                          const std::vector<PostedGroup>& posted, const Status& status,
                          const std::string& what, const protocols::tagged::TaggedStats& before) {
  StepResult result = judge_status(step, status, what, what + " done");
  result.note += " [" + stats_note(engine, before) + "]";
  if (!status.ok() || step.contains("expect")) return result;
  for (const PostedGroup& entry : posted) {
    const auto lengths = engine.received_lengths(entry.id);
    for (size_t i = 0; i < entry.messages.size(); ++i) {
      const Message& message = entry.messages[i];
      const std::string which = "the buffer of tag " + std::to_string(message.tag) + " message " +
                                std::to_string(entry.seqs[i]);
      if (lengths.at(i) != message.bytes) {
        return failed(which + " gets " + std::to_string(message.bytes) + " bytes",
                      std::to_string(lengths.at(i)) + " bytes", result.note);
      }
      const size_t mismatch = transports::first_pattern_mismatch(
          entry.buffers[i].data(), message.bytes, pattern_seed(message.tag, entry.seqs[i]));
      if (mismatch != message.bytes) {
        return failed(which + " holds exactly that message",
                      "data_mismatch at byte " + std::to_string(mismatch) +
                          " (another message, or per-tag order broken)",
                      result.note);
      }
    }
  }
  return result;
}

// Posts every group, waits for all, and checks each buffer for its own message.
StepResult receive_groups(StepState& state, const json& step,
                          const std::vector<std::vector<Message>>& groups,
                          const std::string& what) {
  auto engine = tagged_of(state);
  if (!engine.ok()) return broken(engine.error());
  const protocols::tagged::TaggedStats before = engine.value()->stats();
  std::vector<PostedGroup> posted;
  posted.reserve(groups.size());
  std::vector<RequestId> ids;
  Status status;
  for (const auto& group : groups) {
    PostedGroup& entry = posted.emplace_back();
    entry.messages = group;
    entry.buffers.reserve(group.size());
    std::vector<TaggedBuffer> buffers;
    for (const Message& message : group) {
      entry.seqs.push_back(tagged_session(state).received[message.tag]++);
      entry.buffers.emplace_back(message.capacity);
      buffers.push_back({message.tag, entry.buffers.back()});
    }
    auto id = engine.value()->receive(buffers);
    if (!id.ok()) {
      status = id.error();
      break;
    }
    entry.id = id.value();
    ids.push_back(id.value());
  }
  if (status.ok()) status = engine.value()->wait(ids);
  StepResult result = judge_receives(step, *engine.value(), posted, status, what, before);
  // A receive that timed out still holds its buffers in the engine: they live on with it.
  std::vector<std::vector<std::byte>> buffers;
  for (auto& entry : posted)
    for (auto& buffer : entry.buffers) buffers.push_back(std::move(buffer));
  tagged_session(state).settle(ids, std::move(buffers));
  return result;
}

StepResult tagged_recv(StepState& state, const json& step) {
  std::vector<std::vector<Message>> groups;
  for (const Message& message : expand(step.at("messages"))) groups.push_back({message});
  return receive_groups(state, step, groups,
                        "tagged.recv of " + std::to_string(groups.size()) + " messages");
}

StepResult tagged_group_recv(StepState& state, const json& step) {
  std::vector<std::vector<Message>> groups;
  size_t buffers = 0;
  for (const auto& group : step.at("groups")) {
    groups.push_back(expand(group));
    buffers += groups.back().size();
  }
  return receive_groups(state, step, groups,
                        "tagged.group_recv of " + std::to_string(groups.size()) + " groups, " +
                            std::to_string(buffers) + " buffers");
}

// Drives the engine without posting anything: eager messages that arrive now wait for their
// receive. With `until_unexpected`, stops once that many are held and fails if they never are.
StepResult tagged_progress(StepState& state, const json& step) {
  auto engine = tagged_of(state);
  if (!engine.ok()) return broken(engine.error());
  const protocols::tagged::TaggedStats before = engine.value()->stats();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(step.value("ms", 200));
  const uint64_t wanted = step.value("until_unexpected", uint64_t{0});
  while (std::chrono::steady_clock::now() < deadline) {
    if (wanted > 0 && engine.value()->stats().unexpected >= wanted) break;
    if (auto driven = engine.value()->progress(); !driven.ok())
      return failed("the tagged engine progresses", driven.error().describe());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Messages may arrive while the side waited at a barrier before this step: the count since
  // open is what `until_unexpected` waits for, and what the note says beside the step's own.
  const std::string note = stats_note(*engine.value(), before) + "; " +
                           std::to_string(engine.value()->stats().unexpected) +
                           " held before their receive since open";
  if (engine.value()->stats().unexpected < wanted) {
    return failed(std::to_string(wanted) + " eager messages held before their receive is posted",
                  std::to_string(engine.value()->stats().unexpected), note);
  }
  return met(note);
}

// The bytes of the messages a send or receive step lists (each `bytes` x `count`).
uint64_t messages_memory(const json& step) {
  uint64_t total = 0;
  for (const auto& message : step.value("messages", json::array()))
    total += message.value("bytes", uint64_t{0}) * message.value("count", uint64_t{1});
  return total;
}

uint64_t groups_memory(const json& step) {
  uint64_t total = 0;
  for (const auto& group : step.value("groups", json::array()))
    total += messages_memory({{"messages", group}});
  return total;
}

}  // namespace

void add_tagged_ops(StepOps& ops) {
  // The tagged engine's rendezvous path signals RDMA-written data with immediate data.
  ops["tagged.open"] = {tagged_open, {"write_with_imm"}};
  ops["tagged.send"] = {tagged_send, {"write_with_imm"}, messages_memory};
  ops["tagged.recv"] = {tagged_recv, {"write_with_imm"}, messages_memory};
  ops["tagged.group_recv"] = {tagged_group_recv, {"write_with_imm"}, groups_memory};
  ops["tagged.progress"] = {tagged_progress, {"write_with_imm"}};
}

}  // namespace faultline::harness
