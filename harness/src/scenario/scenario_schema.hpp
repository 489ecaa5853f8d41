#pragma once

namespace faultline::harness {

/// scenarios/schema/scenario.schema.json, compiled in so that validation never depends on
/// where the binary runs.
const char* scenario_schema_text();

}  // namespace faultline::harness
