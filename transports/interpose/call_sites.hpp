#pragma once

#include <string>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// Where in the program the current post or poll comes from: its call stack outside this
/// library, hashed, as 16 hex digits. Frames are objects and functions (CallerFrame::identity),
/// not addresses or offsets, so a site keeps its id from run to run and from build to build
/// (a sweep's points and a --baseline name it).
std::string current_site();

/// The site of `event`, as faults and the sweep's map name it: a completion's post site where
/// the post was seen (`event.site`), the same in every run whichever call polled it; one site
/// per layer beneath the program's (a utility provider's calls into its core, whose stacks are
/// its progress engine's timing, direct or deferred); else current_site().
std::string site_of(const Event& event);

/// A sweep's map of the program (`observe` with `sites: true`): one post or one completion of
/// `event` by `call`, counted per site, call, side, opcode and layer (`posted_inline`: an
/// inline send or an inject; `segments`: its SGEs or iovs). Written as `site` events, each
/// with its count and call stack, when the process exits.
void note_site(const Event& event, const char* call, bool posted_inline = false, int segments = 0);

}  // namespace faultline::transports::interpose
