// SPDX-License-Identifier: Apache-2.0
// The launcher's encoder of the status channel's denial line (src/profiles/denial_line.h is the
// format's home; tests/unit/landlock_run checks both encoders agree byte for byte). PURE: no I/O,
// no allocation, C headers only, like the rest of the launcher.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace landlock_run {

// The status channel's line written just before the launcher execs the command (no newline in
// the name: the constant includes it). A channel holding nothing at all therefore says the
// launcher ended before the exec without its line, never that the command ran.
inline constexpr char kExecLine[] = "exec\n";

// The path of a record whose call names a file the supervisor could not resolve as the kernel did
// (the task hid its /proc entries, or the name does not fit): never a path, which starts with "/".
inline constexpr char kUnknownPath[] = "(unknown)";

// Longest line format_denial_line writes: both encoded fields at their caps, plus the rest.
inline constexpr size_t kDenialLineMax = 3 * 4096 + 3 * 4096 + 128;

// "denial op=OP rule=RULE pid=PID exe=EXE path=PATH\n" into `out`; pid <= 0 writes "-". EXE and
// PATH are percent-encoded (bytes <= 0x20, >= 0x7f and '%' as %XX, upper case). Returns the
// length written, or 0 when `capacity` is too small (nothing usable written).
size_t format_denial_line(char* out, size_t capacity, const char* op, const char* rule, int pid,
                          const char* exe, const char* path);

// "denials-dropped N\n". Same return convention.
size_t format_dropped_line(char* out, size_t capacity, uint64_t dropped);

}  // namespace landlock_run
