#pragma once

namespace faultline::transports::interpose {

/// Marks a call into a provider made through the hook's wrappers, for its scope. A utility
/// provider (ofi_rxm) opens, posts to and reads its core provider's objects inside the
/// program's calls: an object opened at depth one was opened by the program itself, deeper
/// ones belong to a provider beneath it.
class ProviderCall {
 public:
  ProviderCall() { ++depth; }
  ~ProviderCall() { --depth; }
  ProviderCall(const ProviderCall&) = delete;
  ProviderCall& operator=(const ProviderCall&) = delete;

  /// True inside exactly one wrapped call: the program's own.
  static bool from_program() { return depth == 1; }

 private:
  static thread_local int depth;
};

}  // namespace faultline::transports::interpose
