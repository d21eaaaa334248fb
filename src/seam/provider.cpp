// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/provider.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/errors.h"

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

// Every descriptor the spawner must open (provided ones and status channels): distinct numbers
// above stdio, each named in the argv before "--" (so a runner, not the command, uses it).
bool names_its_descriptors(const ConfinedArgv& confined, std::span<const std::string> argv) {
  std::vector<int> numbers;
  for (const ProvidedFd& fd : confined.provided_fds) numbers.push_back(fd.fd);
  for (const StatusChannel& channel : confined.status_channels) numbers.push_back(channel.fd);
  const auto runners_end =
      confined.argv.begin() + static_cast<long>(confined.argv.size() - argv.size() - 1);
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    if (numbers[i] < 3) return false;
    if (std::find(numbers.begin(), numbers.begin() + static_cast<long>(i), numbers[i]) !=
        numbers.begin() + static_cast<long>(i)) {
      return false;
    }
    if (std::find(confined.argv.begin(), runners_end, std::to_string(numbers[i])) == runners_end) {
      return false;
    }
  }
  return true;
}

Result<void> validate_workdir(const std::string& workdir) {
  if (workdir.empty()) return {};
  if (workdir.find('\0') != std::string::npos) {
    return InvalidInput{"the working directory contains a NUL byte; pass a real directory"};
  }
  if (!workdir.starts_with('/')) {
    return InvalidInput{fmt::format("the working directory {} is relative; pass an absolute path",
                                    text::quoted(workdir))};
  }
  return {};
}

}  // namespace

ConfinedArgv SandboxProvider::confine(std::span<const std::string> argv,
                                      const SandboxPolicy& policy) {
  return confine(ConfineRequest{argv, policy, {}, false});
}

ConfinedArgv SandboxProvider::confine(std::initializer_list<std::string> argv,
                                      const SandboxPolicy& policy) {
  return confine(std::span<const std::string>(argv.begin(), argv.size()), policy);
}

ConfinedArgv SandboxProvider::confine(const ConfineRequest& request) {
  const std::span<const std::string> argv = request.argv;
  const SandboxPolicy& policy = request.policy;
  validate_argv(argv).value();
  validate_policy(policy).value();
  validate_workdir(request.workdir).value();
  check_writable_root_exists(policy).value();
  ConfinedArgv confined = confine_validated(request);
  // The runner is executed by path: a bare name would be looked up through the caller's PATH
  // (and a relative one in its working directory), both places a confined run may have written.
  if (!confined.argv.empty() && !confined.argv.front().starts_with('/')) {
    throw SandboxUnavailableError::refused(
        policy.mode, fmt::format("the provider's runner {} is not an absolute path, so it would be "
                                 "looked up through PATH; configure the runner by its absolute "
                                 "path",
                                 text::quoted(confined.argv.front())));
  }
  if (!wraps_command(confined.argv, argv)) {
    throw SandboxUnavailableError::refused(
        policy.mode,
        "the provider returned an argv that does not wrap the command as "
        "[runner, profile..., \"--\", command...]; refusing to run it");
  }
  // A channel nobody asked for names a descriptor the spawner does not open: the runner would
  // write its status into whatever the caller left at that number.
  if (!request.status_channels && !confined.status_channels.empty()) {
    throw SandboxUnavailableError::refused(
        policy.mode,
        "the provider named status channels the caller did not ask for; refusing to run it");
  }
  if (!names_its_descriptors(confined, argv)) {
    throw SandboxUnavailableError::refused(
        policy.mode,
        "the provider asked for descriptors that are not distinct numbers "
        ">= 3 named by its runner's arguments; refusing to run it");
  }
  // The strict reading is what the answer's own facts say, whoever the provider: never a "full"
  // beside a named gap.
  confined.strict_enforcement = strict_reading(confined.enforcement, confined.ungoverned);
  return confined;
}

}  // namespace dsh::sandbox
