#pragma once

namespace faultline::transports::interpose {

/// One more post or completion in this process: a counter `sut exec` watches to tell a program
/// that stopped moving (a hang) from one still at work. FAULTLINE_PROGRESS names the file (8
/// bytes, shared by every process of the program); without it, nothing. Lock-free, any thread.
void note_progress();

}  // namespace faultline::transports::interpose
