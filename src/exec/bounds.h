// SPDX-License-Identifier: Apache-2.0
// The resource bounds of one run's command tree: cgroup children made before the fork, which
// the command is born in (cgroup v2: clone3 CLONE_INTO_CGROUP) or joins before it execs (so
// every descendant is born inside), the supervisor ends through (cgroup.kill) and removes once
// the tree is reaped; rlimits where no cgroup can be had.
#pragma once

#include <sys/resource.h>

#include <optional>
#include <string>
#include <vector>

#include "exec/exec.h"

namespace dsh::sandbox::exec::detail {

class TreeBounds {
 public:
  TreeBounds() = default;
  // Closes the descriptors and removes the directories still there; for an abnormal end (the
  // supervisor died) it first kills what the cgroups hold.
  ~TreeBounds();
  TreeBounds(const TreeBounds&) = delete;
  TreeBounds& operator=(const TreeBounds&) = delete;

  std::vector<std::string> dirs;  // cgroup directories created for this run
  // O_WRONLY per directory, the file a single-threaded process writes "0" to, to join: the v2
  // child's cgroup.procs first when there is one (the fallback of a kernel that refuses clone3),
  // then each v1 child's `tasks`.
  std::vector<int> procs;
  int v2_dir = -1;              // the v2 child (O_DIRECTORY), for clone3 CLONE_INTO_CGROUP, or -1
  int kill = -1;                // O_WRONLY cgroup.kill (cgroup v2, Linux 5.14), or -1
  std::optional<rlim_t> nproc;  // RLIMIT_NPROC for the command, when no cgroup bounds tasks
  std::optional<rlim_t> data;   // RLIMIT_DATA for the command, when no cgroup bounds memory
  // Then also the whole tree's bound, which the supervisor watches (RLIMIT_DATA is per process).
  std::optional<std::uint64_t> watch_memory;
  BoundsFacts facts;
};

// Best effort, never fatal: whatever cgroup this process can create under its own cgroups
// (a pure v2 hierarchy with delegated pids/memory controllers; on a v1/v2 hybrid the v1 pids
// and memory hierarchies, and the v2 one for cgroup.kill), rlimits for the rest.
void make_tree_bounds(const ResourceBounds& bounds, TreeBounds& out);

// Removes `dirs` (rmdir: empty cgroups only); async-signal-safe.
void remove_cgroup_dirs(const std::vector<const char*>& dirs);

}  // namespace dsh::sandbox::exec::detail
