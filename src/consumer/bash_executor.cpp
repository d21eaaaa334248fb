// SPDX-License-Identifier: Apache-2.0
#include "bash_executor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "dsh/sandbox/errors.h"
#include "text.h"
#include "unique_fd.h"

namespace dsh::sandbox::consumer {

namespace {

// Everything the launcher wrote to the status pipe; every writer is gone once the run settled,
// and the read never blocks in case one is not.
std::string read_status(const UniqueFd& fd) {
  ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
  std::string text;
  std::array<char, 1024> buffer{};
  ssize_t n = 0;
  while ((n = ::read(fd.get(), buffer.data(), buffer.size())) > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

bool usable_directory(const std::string& path) {
  struct stat info {};
  const std::string dir = path.empty() ? "." : path;
  return ::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
         ::access(dir.c_str(), X_OK) == 0;
}

// The runner's own failure, or nullopt: out of band when the launcher reports there, in band
// (the backend's rules over the stderr tail) otherwise.
std::optional<std::string> runner_failure(const exec::Result& result, const ConfinedArgv& confined,
                                          const UniqueFd* status) {
  if (status != nullptr) {
    std::string line = read_status(*status);
    if (line.empty()) return std::nullopt;
    return line;
  }
  const auto match =
      classify_runner_failure(result.exit_code, result.err.tail, confined.runner_failure_rules);
  if (!match) return std::nullopt;
  return match->detail;
}

}  // namespace

bool matches_signature(std::optional<int> exit_code, std::string_view stderr_text,
                       std::span<const std::string> signatures) {
  if (!exit_code || *exit_code == 0) return false;
  const std::string lower = text::ascii_lower(stderr_text);
  for (const std::string& signature : signatures) {
    if (!signature.empty() && lower.find(text::ascii_lower(signature)) != std::string::npos) {
      return true;
    }
  }
  return false;
}

bool is_runner_spawn_failure(const exec::SpawnError& error, std::string_view runner,
                             const std::string& workdir) {
  // A missing workdir produces the same codes and must stay an ordinary error; exec reports it
  // as its own stage, and the workdir is checked again here, independently of the spawn.
  return !runner.empty() && error.stage == exec::SpawnStage::kProgram &&
         (error.error == ENOENT || error.error == EACCES) && error.path == runner &&
         usable_directory(workdir);
}

bool takes_status_fd(const ConfinedArgv& confined) { return confined.backend == "landlock"; }

std::vector<std::string> with_status_fd(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {argv.front(), "--status-fd", std::to_string(kStatusFd)};
  out.insert(out.end(), argv.begin() + 1, argv.end());
  return out;
}

RunOutcome SandboxBashExecutor::run(const RunSpec& spec) {
  exec::Request request = spec.process;
  const std::optional<SandboxPolicy> policy = to_sandbox_policy(spec.policy);
  if (!policy) {  // danger-full-access: an explicit unconfined mode; the provider is not asked
    request.argv = spec.argv;
    return {exec::run(request), {spec.policy.mode}};
  }
  const ConfinedArgv confined = provider_.confine(spec.argv, *policy);
  Pipe status;
  const bool out_of_band = takes_status_fd(confined) && open_pipe(status);
  request.argv = out_of_band ? with_status_fd(confined.argv) : confined.argv;
  if (out_of_band) request.fds.push_back({status.write.get(), kStatusFd});
  RunOutcome outcome{exec::run(request), {spec.policy.mode}};
  status.write.reset();
  const exec::Result& result = outcome.process;
  if (result.spawn_error) {
    if (is_runner_spawn_failure(*result.spawn_error, confined.argv.front(), request.workdir)) {
      throw SandboxUnavailableError(policy->mode, result.spawn_error->message());
    }
    return outcome;  // an ordinary start failure: the caller sees spawn_error
  }
  if (auto failure = runner_failure(result, confined, out_of_band ? &status.read : nullptr)) {
    throw SandboxUnavailableError(policy->mode, *failure);
  }
  outcome.sandbox.denied =
      matches_signature(result.exit_code, result.err.tail, confined.denial_signatures);
  outcome.sandbox.enforcement = confined.enforcement;
  outcome.sandbox.backend = confined.backend;
  return outcome;
}

}  // namespace dsh::sandbox::consumer
