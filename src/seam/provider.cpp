// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/provider.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <fmt/format.h>

#include "dsh/sandbox/errors.h"
#include "seam/text.h"

namespace dsh::sandbox {

namespace {

// workspace-write hands the root to the runner as a writable grant; a root that is not an
// existing directory would make the runner refuse, which consumers would read as the sandbox
// being unavailable. It is the caller's mistake, so it is reported as invalid input instead.
Result<void> check_writable_root_exists(const SandboxPolicy& policy) {
  // A ResolvedWorkspace was proven an existing directory when the caller resolved it.
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite || policy.resolved_workspace) return {};
  struct stat info {};
  if (::stat(policy.workspace_root.c_str(), &info) != 0) {
    return InvalidInput{fmt::format(
        "workspace root {} cannot be used: {}; create the directory or choose an existing one",
        text::quoted(policy.workspace_root), std::generic_category().message(errno))};
  }
  if (!S_ISDIR(info.st_mode)) {
    return InvalidInput{fmt::format("workspace root {} is not a directory; pass a directory",
                                    text::quoted(policy.workspace_root))};
  }
  return {};
}

// [runner, ..., "--", argv...] with a non-empty runner that is not the separator itself.
bool wraps_command(const std::vector<std::string>& wrapped, std::span<const std::string> argv) {
  if (wrapped.size() < argv.size() + 2) return false;
  const std::size_t separator = wrapped.size() - argv.size() - 1;
  return !wrapped.front().empty() && wrapped.front() != "--" && wrapped[separator] == "--" &&
         std::equal(argv.begin(), argv.end(), wrapped.begin() + static_cast<long>(separator) + 1);
}

// Each provided descriptor a distinct number above stdio, named in the argv before "--" (so the
// runner, not the command, reads it).
bool provides_named_fds(const ConfinedArgv& confined, std::span<const std::string> argv) {
  const std::size_t separator = confined.argv.size() - argv.size() - 1;
  for (std::size_t i = 0; i < confined.provided_fds.size(); ++i) {
    const int fd = confined.provided_fds[i].fd;
    if (fd < 3) return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (confined.provided_fds[j].fd == fd) return false;
    }
    const std::string number = std::to_string(fd);
    if (std::find(confined.argv.begin(), confined.argv.begin() + static_cast<long>(separator),
                  number) == confined.argv.begin() + static_cast<long>(separator)) {
      return false;
    }
  }
  return true;
}

}  // namespace

ConfinedArgv SandboxProvider::confine(std::span<const std::string> argv,
                                      const SandboxPolicy& policy) {
  validate_argv(argv).value();
  validate_policy(policy).value();
  check_writable_root_exists(policy).value();
  ConfinedArgv confined = confine_validated(argv, policy);
  // The runner is executed by path: a bare name would be looked up through the caller's PATH
  // (and a relative one in its working directory), both places a confined run may have written.
  if (!confined.argv.empty() && !confined.argv.front().starts_with('/')) {
    throw SandboxUnavailableError(
        policy.mode, fmt::format("the provider's runner {} is not an absolute path, so it would be "
                                 "looked up through PATH; configure the runner by its absolute "
                                 "path",
                                 text::quoted(confined.argv.front())));
  }
  if (!wraps_command(confined.argv, argv)) {
    throw SandboxUnavailableError(policy.mode,
                                  "the provider returned an argv that does not wrap the command as "
                                  "[runner, profile..., \"--\", command...]; refusing to run it");
  }
  if (!provides_named_fds(confined, argv)) {
    throw SandboxUnavailableError(
        policy.mode,
        "the provider asked for descriptors that are not distinct numbers "
        ">= 3 named by its runner's arguments; refusing to run it");
  }
  return confined;
}

}  // namespace dsh::sandbox
