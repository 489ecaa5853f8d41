#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "faultline/protocols/kv/rendezvous.hpp"

namespace faultline::protocols::kv {

/// Values by key: what a worker pushes and pulls, and what a server keeps.
using KeyValues = std::map<uint64_t, std::vector<std::byte>>;

/// The worker side: push (PushRequest, answered by a PushResponse) and pull (PullRequest,
/// answered by a PullResponse), each checked against the segment contract on arrival.
class KvWorker {
 public:
  explicit KvWorker(Rendezvous& rendezvous) : rendezvous_(rendezvous) {}
  Status push(const KeyValues& values);
  Result<KeyValues> pull(const std::vector<uint64_t>& keys);

 private:
  Result<Message> expect(MessageType type);
  Rendezvous& rendezvous_;
};

/// The server side. A request that breaks the contract is rejected, recorded and counted; the
/// server goes on serving.
class KvServer {
 public:
  explicit KvServer(Rendezvous& rendezvous) : rendezvous_(rendezvous) {}
  /// Serves `requests` requests (a rejected one counts). An error other than a protocol
  /// violation (a completion error, a timeout) ends serving and is returned.
  Status serve(size_t requests);
  /// Each violation seen, described ("PushRequest: segment count expected 3, actual 2
  /// (detected by server)").
  const std::vector<std::string>& violations() const { return violations_; }
  const KeyValues& store() const { return store_; }

 private:
  Status handle(const Message& request);
  Rendezvous& rendezvous_;
  KeyValues store_;
  std::vector<std::string> violations_;
};

/// The three segments of a PushRequest or PullResponse (keys, vals, lens), and back.
struct EncodedValues {
  std::vector<std::byte> keys;
  std::vector<std::byte> vals;
  std::vector<std::byte> lens;
};
EncodedValues encode(const KeyValues& values);
/// kProtocolViolation when the segments disagree (lens summing past vals).
Result<KeyValues> decode(const Message& message, const std::string& side);

}  // namespace faultline::protocols::kv
