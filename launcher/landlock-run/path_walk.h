// SPDX-License-Identifier: Apache-2.0
// The text side of a path lookup, as the kernel's walk reads a path (fs/namei.c): components
// separated by any number of slashes, trailing slashes belonging to the last component (which
// then must be a directory, and is followed when it is a symbolic link), and a symbolic link's
// target spliced in front of what is left to walk. PURE: no I/O, C headers only, fuzzed
// (tests/fuzz/landlock_run_path_walk_fuzzer.cpp). The supervisor drives it with the kernel's
// answers for each component (supervisor.cpp).
#pragma once

#include <stddef.h>

namespace landlock_run {

inline constexpr size_t kWalkPathMax = 4096;  // PATH_MAX: the kernel refuses longer paths

// What a call spelled, split where the kernel splits it: the directory walked first and the last
// component looked up in it.
struct SpelledPath {
  char parent[kWalkPathMax];  // "" when the path has no slash: the start directory itself
  char last[kWalkPathMax];    // "" for a path that is only slashes ("/")
  bool trailing_slash;        // "name/": must be a directory, followed when a link
  bool plain;                 // `last` is a name: not "", "." or ".."
};

// False when `path` is empty or too long (the kernel's ENOENT / ENAMETOOLONG: no lookup).
bool split_spelled(const char* path, SpelledPath* out);

// The next component at *cursor (leading slashes skipped) into `out`, advancing *cursor past it;
// false at the end or when a component does not fit.
bool next_component(const char** cursor, char* out, size_t capacity);

// `target` + "/" + `rest` into `out` (what is left to walk once a symbolic link's target replaces
// it); `rest` may be empty. False when it does not fit (the kernel's ENAMETOOLONG).
bool splice_link(const char* target, const char* rest, char* out, size_t capacity);

}  // namespace landlock_run
