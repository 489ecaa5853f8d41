// The protocol engines a scenario can drive. Adding an engine: its folder in protocols/, its
// ops file here (a ProtocolSession and an add_<engine>_ops function), one line below, its
// part of the scenario schema, its README row.
#include "faultline/harness/scenario/step_ops.hpp"

namespace faultline::harness {

void add_kv_ops(StepOps& ops);          // kv_ops.cpp
void add_collective_ops(StepOps& ops);  // collective_ops.cpp
void add_tagged_ops(StepOps& ops);      // tagged_ops.cpp

void add_protocol_ops(StepOps& ops) {
  add_kv_ops(ops);
  add_collective_ops(ops);
  add_tagged_ops(ops);
}

}  // namespace faultline::harness
