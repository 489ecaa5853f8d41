#pragma once

#include <catch2/catch.hpp>

/// REQUIREs that a Status or Result is ok, printing the full error text when it is not.
#define REQUIRE_OK(expr)                                                               \
  do {                                                                                 \
    const auto& faultline_checked_ = (expr);                                           \
    INFO((faultline_checked_.ok() ? std::string()                                      \
                                  : faultline_checked_.error().describe_with_hint())); \
    REQUIRE(faultline_checked_.ok());                                                  \
  } while (false)
