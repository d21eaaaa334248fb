// SPDX-License-Identifier: Apache-2.0
// Small host look-ups shared by the path planner and the git state finder.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dsh::sandbox::policy {

std::optional<struct stat> lstat_of(const std::string& path);

// realpath of an existing path, else nullopt.
std::optional<std::string> existing_canonical(const std::string& path);

bool is_directory(const std::string& path);

// A small regular file (at most 64 KiB) read without following a symlink at its last
// component, or empty.
std::string read_small(const std::string& path);
// The same, for the entry `name` of the directory open at `dir_fd`.
std::string read_small_at(int dir_fd, const std::string& name);

std::string trim(std::string_view text);

// The directory holding `path` ("/" for a top-level name or a name without a slash).
std::string parent_of(const std::string& path);

// `dir` + "/" + `name`, in one allocation.
std::string join_path(std::string_view dir, std::string_view name);

// The entries of the directory open at `dir_fd` from its offset ("." and ".." left out), with
// their types (DT_UNKNOWN resolved by fstatat): getdents64(2) (glibc 2.30) on the descriptor
// itself, which costs no descriptor of its own.
std::vector<std::pair<std::string, unsigned char>> entries_at(int dir_fd);

// The names in a directory, sorted, without "." and ".."; empty when it cannot be listed.
std::vector<std::string> directory_names(const std::string& dir);

}  // namespace dsh::sandbox::policy
