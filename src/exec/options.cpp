// SPDX-License-Identifier: Apache-2.0
// Request validation and argv[0] resolution: everything decided before a process is forked.
#include <cerrno>
#include <cmath>
#include <cstring>

#include "exec/exec.h"

namespace dsh::sandbox::exec {

namespace {

// confstr(_CS_PATH) on glibc: what execvp searches when PATH is unset, minus its historical
// leading current-directory entry.
constexpr std::string_view kDefaultPath = "/bin:/usr/bin";

bool positive_finite(double value) { return std::isfinite(value) && value > 0; }

}  // namespace

sandbox::Result<std::chrono::milliseconds> resolve_timeout(std::optional<double> timeout_ms,
                                                           double max_ms) {
  if (!positive_finite(max_ms)) {
    return InvalidInput{"request.maxTimeoutMs must be a positive finite number"};
  }
  const double requested = timeout_ms.value_or(kDefaultTimeoutMs);
  if (!positive_finite(requested)) {
    // The reference's text, byte for byte (its subprocess layer is bash-local).
    return InvalidInput{"bash-local: request.timeoutMs must be a positive finite number"};
  }
  const double bounded = std::ceil(std::min(requested, max_ms));
  return std::chrono::milliseconds(static_cast<std::int64_t>(bounded));
}

sandbox::Result<void> validate(const Request& request, bool foreground) {
  if (request.argv.empty()) return InvalidInput{"request.argv must name a program"};
  if (foreground && !request.no_deadline) {
    if (auto timeout = resolve_timeout(request.timeout_ms, request.max_timeout_ms); !timeout) {
      return timeout.error();
    }
  }
  if (!std::isfinite(request.grace_ms) || request.grace_ms < 0) {
    return InvalidInput{"request.graceMs must be a non-negative finite number"};
  }
  if (request.bounds.max_processes && *request.bounds.max_processes == 0) {
    return InvalidInput{"request.bounds.maxProcesses must be positive (nullopt: no bound)"};
  }
  if (request.bounds.max_memory_bytes && *request.bounds.max_memory_bytes < kMinMemoryBytes) {
    return InvalidInput{
        "request.bounds.maxMemoryBytes must be at least 16 MiB (nullopt: no bound)"};
  }
  if (request.stdout_max_bytes == 0 || request.stderr_max_bytes == 0) {
    return InvalidInput{"request.maxOutputBytes must be positive"};
  }
  for (const FdMapping& map : request.fds) {
    if (map.source < 0 || map.target <= 2) {
      return InvalidInput{"request.fds: map an open descriptor to a target above 2"};
    }
  }
  return {};
}

std::vector<std::string> exec_candidates(const std::string& program,
                                         const std::optional<std::string>& path) {
  if (program.empty() || program.find('/') != std::string::npos) return {};
  const std::string_view search =
      path.has_value() && !path->empty() ? std::string_view(*path) : kDefaultPath;
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= search.size()) {
    const std::size_t end = std::min(search.find(':', begin), search.size());
    const std::string_view dir = search.substr(begin, end - begin);
    // An empty or relative entry would resolve against the current directory: skipped.
    if (dir.starts_with('/')) {
      out.push_back(std::string(dir) + (dir.ends_with('/') ? "" : "/") + program);
    }
    begin = end + 1;
  }
  return out;
}

std::string SpawnError::message() const {
  // strerrorname_np / strerrordesc_np (glibc 2.32): thread-safe, unlike strerror.
  const char* name = ::strerrorname_np(error);
  const char* text = ::strerrordesc_np(error);
  const std::string code = name != nullptr ? name : "errno " + std::to_string(error);
  const std::string what = stage == SpawnStage::kWorkdir ? "chdir " : "spawn ";
  return what + (path.empty() ? "" : path + " ") + code +
         (text != nullptr ? std::string(" (") + text + ")" : "");
}

}  // namespace dsh::sandbox::exec
