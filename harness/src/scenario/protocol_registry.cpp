// The protocol engines a scenario can drive. Adding an engine: its folder in protocols/, its
// ops file here (a ProtocolSession and add_<engine>_ops), one line in the list below, its
// part of the scenario schema, its README row.
#include "faultline/harness/scenario/step_ops.hpp"

// One line per engine, above the end: X(name) is add_<name>_ops(StepOps&), defined in
// <name>_ops.cpp.
#define FAULTLINE_PROTOCOL_ENGINES(X)                     \
  X(kv)                                                   \
  X(collective)                                           \
  X(tagged)                                               \
  X(control) /* the control plane itself: control.join */ \
  /* the end of the list */

namespace faultline::harness {

#define FAULTLINE_DECLARE_ENGINE(name) void add_##name##_ops(StepOps& ops);
FAULTLINE_PROTOCOL_ENGINES(FAULTLINE_DECLARE_ENGINE)
#undef FAULTLINE_DECLARE_ENGINE

void add_protocol_ops(StepOps& ops) {
#define FAULTLINE_ADD_ENGINE(name) add_##name##_ops(ops);
  FAULTLINE_PROTOCOL_ENGINES(FAULTLINE_ADD_ENGINE)
#undef FAULTLINE_ADD_ENGINE
}

}  // namespace faultline::harness
