// SPDX-License-Identifier: Apache-2.0
// exec's detached mode: a process of the caller's own code that outlives the caller, for a
// background job's supervisor (which then runs its command through exec::start, under exec's run
// supervisor like any run).
#pragma once

#include <functional>
#include <span>

namespace dsh::sandbox::exec {

// Runs `body` in a new process detached from the caller: a fork, setsid, and a second fork, so
// the process is outside the caller's session and process group (the terminal's signals and a
// kill of the caller's group miss it) and no session leader (it can never acquire a controlling
// terminal), adopted by init or the nearest subreaper once the middle process exits. Its stdin,
// stdout and stderr are /dev/null and every other descriptor but `keep` is closed: a pipe it
// inherited from whoever started the caller would otherwise never see end-of-file while it runs.
// It tells the caller what it must through a descriptor in `keep`.
//
// Returns once the middle process has exited: 0, or the errno of the first fork (a failed second
// fork ends the middle process and never runs the body). The body runs in a copy of the caller,
// after fork(2) in a process that may have had other threads, as the caller's code; it must end
// with _exit(2) (returning would run the caller's code twice: it then exits 0).
int start_detached(const std::function<void()>& body, std::span<const int> keep);

}  // namespace dsh::sandbox::exec
