#pragma once

#include <map>
#include <memory>
#include <string>

namespace faultline::harness {

/// One protocol engine's state on one side of a scenario: made by the engine's first step,
/// kept in StepState::sessions under the engine's name, gone with the side. The scenario
/// engine names no protocol: it drives, closes and destroys engines only through this.
class ProtocolSession {
 public:
  virtual ~ProtocolSession() = default;
  /// Drives the engine while the side waits for its peer (a failure stays in the engine for
  /// its next step). True when the engine owns the completions of the side's endpoint, so the
  /// raw progress leaves that endpoint alone.
  virtual bool progress() = 0;
  /// The side's endpoint was just destroyed (close_endpoint): drop what lived on it; a later
  /// connect starts the engine afresh.
  virtual void endpoint_closed() {}
  /// The side is ending: destroy the endpoints this session owns itself, before the side's
  /// endpoint, buffers and engines go (their outstanding work may use that memory).
  virtual void close_own_endpoints() {}
};

/// The sessions of one side, by engine name.
using ProtocolSessions = std::map<std::string, std::unique_ptr<ProtocolSession>>;

}  // namespace faultline::harness
