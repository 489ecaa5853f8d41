#pragma once

namespace faultline::harness {

/// reports/schema/report.schema.json, compiled in.
const char* report_schema_text();
/// reports/schema/diagnose.schema.json, compiled in.
const char* diagnose_schema_text();
/// scenarios/schema/device-profile.schema.json, compiled in.
const char* device_profile_schema_text();

}  // namespace faultline::harness
