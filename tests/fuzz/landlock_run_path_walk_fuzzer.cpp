// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the evidence supervisor's path text (launcher/landlock-run/path_walk.h):
// the split of a spelled path into the directory walked and its last component, and a walk that
// splices symbolic link targets in front of what is left. Input: NUL-separated strings, the first
// the path, the rest link targets; each component is treated as a link (taking the next target)
// when the walk's byte in the path's first string says so. Any broken invariant aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "path_walk.h"

namespace {

using landlock_run::kWalkPathMax;

void check(bool condition) {
  if (!condition) std::abort();
}

void check_split(const std::string& path) {
  static landlock_run::SpelledPath split;
  const bool ok = landlock_run::split_spelled(path.c_str(), &split);
  check(ok == (!path.empty() && path.size() < kWalkPathMax));
  if (!ok) return;
  const std::string parent = split.parent;
  const std::string last = split.last;
  check(last.find('/') == std::string::npos);
  check(split.plain == (!last.empty() && last != "." && last != ".."));
  if (path.find_first_not_of('/') == std::string::npos) {  // only slashes: the root itself
    check(parent == "/" && last.empty() && !split.trailing_slash);
    return;
  }
  // Nothing is folded or dropped: parent + last + the trailing slashes is the path again.
  check(path.compare(0, parent.size(), parent) == 0);
  check(parent.empty() || parent.back() == '/');
  check(!last.empty());
  check(path.compare(parent.size(), last.size(), last) == 0);
  const std::string tail = path.substr(parent.size() + last.size());
  check(tail.find_first_not_of('/') == std::string::npos);
  check(split.trailing_slash == !tail.empty());
}

// Walks `path`, splicing targets[i] in place of each component `links` marks, at most 40 times
// (the kernel's bound); every component is a non-empty name without a slash.
void check_walk(const std::string& path, const std::vector<std::string>& targets) {
  static char pending[kWalkPathMax];
  if (path.size() >= sizeof(pending)) return;
  std::memcpy(pending, path.c_str(), path.size() + 1);
  const char* cursor = pending;
  char component[kWalkPathMax];
  std::size_t next_target = 0;
  std::size_t steps = 0;
  while (landlock_run::next_component(&cursor, component, sizeof(component))) {
    const std::size_t length = std::strlen(component);
    check(length > 0 && std::strchr(component, '/') == nullptr);
    check(++steps <= 41 * kWalkPathMax);
    const bool link = (static_cast<unsigned char>(component[0]) & 1U) != 0;
    if (!link || next_target >= targets.size() || next_target >= 40) continue;
    const std::string& target = targets[next_target++];
    const std::string rest = cursor;
    static char rest_copy[kWalkPathMax];
    std::memcpy(rest_copy, rest.c_str(), rest.size() + 1);
    const bool spliced =
        landlock_run::splice_link(target.c_str(), rest_copy, pending, sizeof(pending));
    const std::size_t need = target.size() + (rest.empty() ? 0 : 1 + rest.size());
    check(spliced == (!target.empty() && need < sizeof(pending)));
    if (!spliced) return;
    check(std::string(pending) == (rest.empty() ? target : target + "/" + rest));
    cursor = pending;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> strings(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      strings.emplace_back();
    } else {
      strings.back().push_back(static_cast<char>(data[i]));
    }
  }
  check_split(strings.front());
  check_walk(strings.front(), std::vector<std::string>(strings.begin() + 1, strings.end()));
  return 0;
}
