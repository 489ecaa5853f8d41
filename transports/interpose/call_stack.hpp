#pragma once

#include <nlohmann/json.hpp>

namespace faultline::transports::interpose {

/// Where in the program the current call came from: up to 8 frames outside this library, each
/// "OBJECT(FUNCTION+0xOFFSET)" or "OBJECT+0xOFFSET" (the offset into the object, for addr2line
/// when the function has no dynamic symbol).
nlohmann::json caller_stack();

}  // namespace faultline::transports::interpose
