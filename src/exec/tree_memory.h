// SPDX-License-Identifier: Apache-2.0
// The memory of a run's whole command tree, as the supervisor measures it where no cgroup bounds
// it: RLIMIT_DATA holds each process, but a tree of N processes could use N times the bound.
// Runs in the forked supervisor: async-signal-safe, no allocation.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace dsh::sandbox::exec::detail {

// Every process below the calling process (its children, theirs, ...), found through
// /proc/<pid>/task/<tid>/children (Linux 3.5, CONFIG_PROC_CHILDREN; children are listed under
// the thread that made them), and the sum of their resident anonymous and shared memory
// (RssAnon + RssShmem of /proc/<pid>/status, Linux 4.5), in bytes. `queue` holds `capacity`
// pids: a tree larger than that is counted up to it. Processes that exit meanwhile count as
// nothing. Shared memory mapped by several processes counts once per process: an over-count, the
// safe side of a bound.
std::uint64_t tree_memory_bytes(pid_t* queue, std::size_t capacity);

}  // namespace dsh::sandbox::exec::detail
