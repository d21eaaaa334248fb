// SPDX-License-Identifier: Apache-2.0
// File helpers of every suite: what a test writes before a run and reads back after it, and
// what /proc says of a process, read from outside.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace dsh::testing {

bool exists(const std::string& path);            // lstat: a dangling link exists
std::string read_file(const std::string& path);  // "" when absent
// Writes `content` with exactly `mode` (past the umask); fails the test when it cannot.
void write_file(const std::string& path, const std::string& content, int mode = 0644);
std::vector<std::string> list_dir(const std::string& path);  // sorted names, no . or ..

// A field of /proc/<pid>/status ("NoNewPrivs" -> "1"), "<missing>" when absent; pid 0 means
// this process.
std::string status_field(pid_t pid, const std::string& key);

}  // namespace dsh::testing
