// SPDX-License-Identifier: Apache-2.0
// Kernel facts this relies on:
// - cgroup v2: a child's cgroup.controllers lists what its parent's cgroup.subtree_control
//   enabled; a non-root cgroup with processes of its own cannot enable controllers for its
//   children (the "no internal processes" rule), so on most hosts only a delegated subtree
//   offers pids/memory. Moving a process needs write access to cgroup.procs of the common
//   ancestor of both cgroups (here: this process's own cgroup). cgroup.kill (Linux 5.14) kills
//   every process of the cgroup and its descendants at once, even one forking as it goes.
// - cgroup v1 (hybrid hosts): each controller is its own hierarchy; pids.max bounds the tasks
//   of a cgroup, memory.limit_in_bytes its memory (the OOM killer acts inside the cgroup).
// - RLIMIT_NPROC counts every task of the real uid (in the user namespace chain), not the
//   tree's, and is not checked for uid 0 of the initial user namespace (kernel/fork.c): root
//   needs the cgroup. RLIMIT_AS counts address space merely reserved (V8's pointer cage, the
//   JVM's heap reservation, Go's arenas) and breaks them at any useful value; RLIMIT_DATA (Linux
//   4.7) counts private writable mappings only, which is what a process actually can dirty, but
//   it is per process.
#include "exec/bounds.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <sstream>
#include <string_view>
#include <thread>

#include "base/io.h"

namespace dsh::sandbox::exec {

std::uint64_t default_max_memory_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return std::uint64_t{4} << 30;
  return static_cast<std::uint64_t>(info.totalram) * info.mem_unit / 2;
}

namespace detail {

namespace {

constexpr std::string_view kWatchedByTheSupervisor =
    "RLIMIT_DATA per process; the tree's resident anonymous and shared memory summed by the "
    "supervisor";

std::atomic<unsigned> next_run{0};

// Read with plain read(2): every run reads a few of these, and /proc/self/mountinfo is long.
std::string read_text(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  (void)io::read_all(fd, text);
  ::close(fd);
  return text;
}

bool write_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = io::write_all(fd, text) == text.size();
  ::close(fd);
  return ok;
}

// Whether `word` is one of the words of `text`, separated by white space or commas.
bool has_word(std::string_view text, std::string_view word) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find_first_of(" \t\n,", start);
    if (end == std::string_view::npos) end = text.size();
    if (text.substr(start, end - start) == word) return true;
    start = end + 1;
  }
  return false;
}

// The `index`th field of a line separated by single spaces, or "".
std::string_view field(std::string_view line, std::size_t index) {
  for (std::size_t i = 0; i < index; ++i) {
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return {};
    line.remove_prefix(space + 1);
  }
  return line.substr(0, line.find(' '));
}

// Calls `each` with every line of `text`.
template <typename Each>
void for_each_line(std::string_view text, Each each) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    each(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// Where this process's cgroups are, per hierarchy: the v2 one and the v1 pids and memory ones.
struct Places {
  std::string v2;
  std::string pids;
  std::string memory;
};

// /proc/self/mountinfo: "id parent major:minor root mountpoint options... - fstype source
// superoptions". Only mounts of a hierarchy's root are used: a cgroup namespace's view mounted
// elsewhere would need the path translated.
Places own_cgroups() {
  std::string v2_mount;
  std::string pids_mount;
  std::string memory_mount;
  const std::string mountinfo = read_text("/proc/self/mountinfo");
  for_each_line(mountinfo, [&](std::string_view line) {
    const std::string_view root = field(line, 3);
    const std::string_view mountpoint = field(line, 4);
    const std::size_t dash = line.find(" - ");
    if (root != "/" || dash == std::string_view::npos) return;
    const std::string_view tail = line.substr(dash + 3);  // fstype source superoptions
    const std::string_view fstype = field(tail, 0);
    const std::string_view super = field(tail, 2);
    if (fstype == "cgroup2" && v2_mount.empty()) v2_mount = mountpoint;
    if (fstype == "cgroup") {
      if (has_word(super, "pids") && pids_mount.empty()) pids_mount = mountpoint;
      if (has_word(super, "memory") && memory_mount.empty()) memory_mount = mountpoint;
    }
  });
  Places places;
  const std::string cgroup = read_text("/proc/self/cgroup");
  for_each_line(cgroup, [&](std::string_view line) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) return;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    if (path.starts_with("/..")) return;  // outside this cgroup namespace's view
    const std::string tail(path == "/" ? std::string_view() : path);
    if (line.starts_with("0::") && !v2_mount.empty()) places.v2 = v2_mount + tail;
    if (has_word(controllers, "pids") && !pids_mount.empty()) places.pids = pids_mount + tail;
    if (has_word(controllers, "memory") && !memory_mount.empty()) {
      places.memory = memory_mount + tail;
    }
  });
  return places;
}

// Removes the empty run cgroups of `parent` whose creator is gone: left only when both a
// run's caller and its supervisor were killed (the OOM killer can pick both). A populated one
// holds a tree that is still running and is left alone (rmdir refuses it with EBUSY).
void sweep_stale(const std::string& parent) {
  DIR* listing = ::opendir(parent.c_str());
  if (listing == nullptr) return;
  const std::string self = std::to_string(::getpid());
  while (const dirent* entry = ::readdir(listing)) {  // NOLINT(concurrency-mt-unsafe): own DIR
    const std::string_view name = entry->d_name;
    if (!name.starts_with("dsh-run-")) continue;
    const std::string_view rest = name.substr(8);
    const std::string creator(rest.substr(0, rest.find('-')));
    if (creator.empty() || creator == self ||
        creator.find_first_not_of("0123456789") != std::string::npos || creator.size() > 9) {
      continue;
    }
    if (::kill(static_cast<pid_t>(std::stol(creator)), 0) != 0 && errno == ESRCH) {
      ::rmdir((parent + "/" + std::string(name)).c_str());
    }
  }
  ::closedir(listing);
}

// A fresh child of `parent`, or "" when this process may not make one.
std::string make_child(const std::string& parent) {
  if (parent.empty() || ::access((parent + "/cgroup.procs").c_str(), W_OK) != 0) return "";
  sweep_stale(parent);
  std::string child = parent + "/dsh-run-" + std::to_string(::getpid()) + "-" +
                      std::to_string(next_run.fetch_add(1));
  if (::mkdir(child.c_str(), 0755) != 0) return "";
  return child;
}

// `join`: the file a process writes "0" to, to move itself into `dir`.
void adopt(TreeBounds& out, const std::string& dir, const char* join) {
  const int procs = ::open((dir + "/" + join).c_str(), O_WRONLY | O_CLOEXEC);
  if (procs < 0) {
    ::rmdir(dir.c_str());
    return;
  }
  out.dirs.push_back(dir);
  out.procs.push_back(procs);
}

// cgroup v2: the child for cgroup.kill, and for pids/memory where the parent delegates them.
void try_v2(const std::string& place, const ResourceBounds& bounds, TreeBounds& out) {
  const std::string dir = make_child(place);
  if (dir.empty()) return;
  std::string controllers = read_text(dir + "/cgroup.controllers");
  const std::string parent_has = read_text(place + "/cgroup.controllers");
  bool enabled = false;
  for (const char* controller : {"pids", "memory"}) {
    // Enabling is refused (EBUSY) for a non-root parent that holds processes: then it stays off.
    if (!has_word(controllers, controller) && has_word(parent_has, controller)) {
      enabled |= write_text(place + "/cgroup.subtree_control", std::string("+") + controller);
    }
  }
  if (enabled) controllers = read_text(dir + "/cgroup.controllers");
  if (bounds.max_processes && has_word(controllers, "pids") &&
      write_text(dir + "/pids.max", std::to_string(*bounds.max_processes))) {
    out.facts.processes.enforced_by = "cgroup2 pids.max";
  }
  if (bounds.max_memory_bytes && has_word(controllers, "memory") &&
      write_text(dir + "/memory.max", std::to_string(*bounds.max_memory_bytes))) {
    write_text(dir + "/memory.swap.max", "0");  // swap would be memory beyond the bound
    out.facts.memory.enforced_by = "cgroup2 memory.max";
  }
  // A v2 domain cgroup is joined only through cgroup.procs, whose write waits for an RCU grace
  // period; the command is instead born inside (clone3 CLONE_INTO_CGROUP, through `v2_dir`), and
  // the write is left for a kernel that refuses that.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    adopt(out, dir, "cgroup.procs");
  } else {
    ::rmdir(dir.c_str());
  }
  if (out.dirs.empty() || out.dirs.back() != dir) {
    if (dir_fd >= 0) ::close(dir_fd);
    out.facts.processes.enforced_by.clear();
    out.facts.memory.enforced_by.clear();
    return;
  }
  out.v2_dir = dir_fd;
  out.kill = ::open((dir + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC);
  if (out.kill >= 0) out.facts.tree_kill = "cgroup2 cgroup.kill";
}

// cgroup v1: one child in one controller's hierarchy, with its limit.
bool try_v1(const std::string& place, const std::string& file, std::uint64_t limit,
            TreeBounds& out) {
  const std::string dir = make_child(place);
  if (dir.empty()) return false;
  if (!write_text(dir + "/" + file, std::to_string(limit))) {
    ::rmdir(dir.c_str());
    return false;
  }
  if (file == "memory.limit_in_bytes") {  // swap too, where accounted (memsw >= limit)
    write_text(dir + "/memory.memsw.limit_in_bytes", std::to_string(limit));
  }
  const std::size_t before = out.dirs.size();
  // `tasks`, not cgroup.procs: the joining command is single-threaded (between clone and exec),
  // so moving its one thread moves the process, and a write of "0" (the caller itself) to a v1
  // `tasks` file skips the threadgroup lock whose taking waits for an RCU grace period: tens of
  // microseconds instead of milliseconds (kernel/cgroup/cgroup.c, cgroup_procs_write_start).
  adopt(out, dir, "tasks");
  return out.dirs.size() > before;
}

}  // namespace

void make_tree_bounds(const ResourceBounds& bounds, TreeBounds& out) {
  out.facts.processes.limit = bounds.max_processes;
  out.facts.memory.limit = bounds.max_memory_bytes;
  const Places places = bounds.use_cgroup ? own_cgroups() : Places{};
  try_v2(places.v2, bounds, out);
  if (bounds.max_processes && out.facts.processes.enforced_by.empty() &&
      try_v1(places.pids, "pids.max", *bounds.max_processes, out)) {
    out.facts.processes.enforced_by = "cgroup1 pids.max";
  }
  if (bounds.max_memory_bytes && out.facts.memory.enforced_by.empty() &&
      try_v1(places.memory, "memory.limit_in_bytes", *bounds.max_memory_bytes, out)) {
    out.facts.memory.enforced_by = "cgroup1 memory.limit_in_bytes";
  }
  if (bounds.max_processes && out.facts.processes.enforced_by.empty()) {
    out.nproc = static_cast<rlim_t>(*bounds.max_processes);
    // Not checked for uid 0 in the initial user namespace: no bound, and the facts say so.
    if (::getuid() != 0) out.facts.processes.enforced_by = "RLIMIT_NPROC";
  }
  if (bounds.max_memory_bytes && out.facts.memory.enforced_by.empty()) {
    out.data = static_cast<rlim_t>(*bounds.max_memory_bytes);
    // RLIMIT_DATA alone would let a tree of N processes use N times the bound: the supervisor
    // sums the tree's memory and ends it above the bound (supervisor.h).
    out.watch_memory = bounds.max_memory_bytes;
    out.facts.memory.enforced_by = std::string(kWatchedByTheSupervisor);
  }
}

void remove_cgroup_dirs(const std::vector<const char*>& dirs) {
  for (const char* dir : dirs) ::rmdir(dir);
}

TreeBounds::~TreeBounds() {
  bool populated = false;
  for (const std::string& dir : dirs) {
    if (::rmdir(dir.c_str()) != 0 && errno == EBUSY) populated = true;
  }
  if (populated) {
    // The supervisor died before it could end the tree: end it through the cgroups.
    if (kill >= 0) (void)!::write(kill, "1", 1);
    for (int attempt = 0; attempt < 100; ++attempt) {
      bool left = false;
      for (const std::string& dir : dirs) {
        for (const std::string& pid : [&] {
               std::vector<std::string> pids;
               std::istringstream text(read_text(dir + "/cgroup.procs"));
               for (std::string each; text >> each;) pids.push_back(each);
               return pids;
             }()) {
          ::kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
        }
        if (::rmdir(dir.c_str()) != 0 && errno == EBUSY) left = true;
      }
      if (!left) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  for (const int fd : procs) ::close(fd);
  if (v2_dir >= 0) ::close(v2_dir);
  if (kill >= 0) ::close(kill);
}

}  // namespace detail
}  // namespace dsh::sandbox::exec
