#pragma once

#include <string>

namespace faultline::harness {

/// Whether `text` can name an agent or a rail in reports: 1 to 64 of A-Z a-z 0-9 . _ : @ + -.
bool is_agent_label(const std::string& text);

/// An agent's default name: its host name with every other character made '-' and cut to 64
/// ("(none)", a host without a name, becomes "-none-").
std::string agent_name_from_host(const std::string& host);

/// Whether agent label `a` comes before `b` as people sort them: runs of digits by their value
/// ("node2" before "node10", "flnode.9" before "flnode.10"), the rest character by character.
bool label_less(const std::string& a, const std::string& b);

}  // namespace faultline::harness
