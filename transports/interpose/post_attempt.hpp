#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

namespace faultline::transports::interpose {

/// One post of the program as the provider takes it or not. What the interposer counted for
/// it (each fault's occurrences, its call site's count) and the fault events it logged stand
/// once the provider accepted it; a post the provider refused with -FI_EAGAIN is no
/// occurrence: the program posts it again, and the counts and faults go to that attempt. So
/// `nth`, a sweep's sites and points, and its shards are the same however often a provider
/// said "again" (Open MPI retries a send thousands of times while ofi_rxm connects).
/// Scoped to a thread; an attempt inside another (a provider's own post through a hooked
/// layer beneath) is its own.
class PostAttempt {
 public:
  PostAttempt();
  /// Accepted unless refused(): the fault events it held are logged.
  ~PostAttempt();
  PostAttempt(const PostAttempt&) = delete;
  PostAttempt& operator=(const PostAttempt&) = delete;

  /// The attempt running on this thread, if any.
  static PostAttempt* current();
  /// What to undo if the provider refuses the post (run last first).
  void on_refused(std::function<void()> undo);
  /// A fault event of the post: logged when it is accepted, dropped when refused.
  void hold(nlohmann::json event);
  /// The provider refused the post: what it counted and changed is undone now.
  void refused();

  /// No attempt while it lasts: a completion read inside a post (a provider's progress) is
  /// no part of the post.
  class Outside {
   public:
    Outside();
    ~Outside();
    Outside(const Outside&) = delete;
    Outside& operator=(const Outside&) = delete;

   private:
    PostAttempt* attempt_;
  };

 private:
  PostAttempt* outer_;
  std::vector<std::function<void()>> undo_;
  std::vector<nlohmann::json> held_;
  bool refused_ = false;
};

}  // namespace faultline::transports::interpose
