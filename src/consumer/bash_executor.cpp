// SPDX-License-Identifier: Apache-2.0
#include "consumer/bash_executor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <type_traits>
#include <variant>

#include "dsh/sandbox/errors.h"
#include "seam/text.h"
#include "seam/unique_fd.h"

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

// The first stderr line bwrap wrote, as the runner-failure detail.
std::string bwrap_line(const std::string& stderr_text) {
  std::size_t start = 0;
  while (start < stderr_text.size()) {
    const std::size_t end = std::min(stderr_text.find('\n', start), stderr_text.size());
    const std::string_view line(stderr_text.data() + start, end - start);
    if (line.starts_with("bwrap: ")) return std::string(line);
    start = end + 1;
  }
  return "bwrap: exited before running the command";
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

RunnerPositions runner_positions(const ConfinedArgv& confined) {
  if (confined.backend == "landlock") return {std::nullopt, 0};
  if (confined.backend == "bwrap") return {0, std::nullopt};
  if (confined.backend == "bwrap+landlock") {
    // bwrap's profile never contains a bare "--" (roots are absolute): the first one ends it.
    const auto separator = std::find(confined.argv.begin(), confined.argv.end(), "--");
    return {0, static_cast<std::size_t>(separator - confined.argv.begin()) + 1};
  }
  return {};  // runnerCommand, Seatbelt, windows-acl: in-band rules only
}

std::vector<std::string> with_runner_flags(const std::vector<std::string>& argv,
                                           const RunnerPositions& positions,
                                           const std::string& bwrap_workdir) {
  std::vector<std::string> out;
  out.reserve(argv.size() + 6);
  for (std::size_t i = 0; i < argv.size(); ++i) {
    out.push_back(argv[i]);
    if (i == positions.bwrap) {
      out.insert(out.end(),
                 {"--json-status-fd", std::to_string(kBwrapStatusFd), "--chdir", bwrap_workdir});
    } else if (i == positions.launcher) {
      out.insert(out.end(), {"--status-fd", std::to_string(kLauncherStatusFd)});
    }
  }
  return out;
}

// The status pipes of the wrap's runners; their write ends are mapped into the child and
// closed here once it started.
struct StatusChannel {
  std::optional<Pipe> bwrap;
  std::optional<Pipe> launcher;
  std::string bwrap_workdir;  // bwrap's --chdir

  void close_write_ends() {
    if (bwrap) bwrap->write.reset();
    if (launcher) launcher->write.reset();
  }
};

namespace {

// One wrap, ready to spawn: the request, the facts it classifies against, its status channel.
struct Prepared {
  exec::Request request;
  std::optional<ConfinedArgv> confined;  // absent under danger-full-access
  std::unique_ptr<StatusChannel> status;
  std::vector<UniqueFd> provided;  // the wrap's provided descriptors, open until the spawn
};

// A sealed memfd at offset 0 holding `content`: what a runner reads a provided descriptor from.
// A memfd rather than a pipe: nothing can block on its size, and the seals keep it unchanged.
UniqueFd provided_descriptor(const ProvidedFd& wanted, SandboxMode mode) {
  if (wanted.fd == kBwrapStatusFd || wanted.fd == kLauncherStatusFd) {
    throw SandboxUnavailableError(*to_confined_mode(mode),
                                  "the wrap asks for descriptor " + std::to_string(wanted.fd) +
                                      ", which carries a runner's status channel");
  }
  UniqueFd fd(::memfd_create("dsh-sandbox-provided", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd.get() < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  std::size_t written = 0;
  while (written < wanted.content.size()) {
    const ssize_t n =
        ::write(fd.get(), wanted.content.data() + written, wanted.content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::system_error(errno, std::generic_category(), "write to memfd");
    written += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) !=
          0 ||
      ::lseek(fd.get(), 0, SEEK_SET) != 0) {
    throw std::system_error(errno, std::generic_category(), "sealing the memfd");
  }
  return fd;
}

// The directory the command must run in, absolute, as bwrap's --chdir needs it.
std::string absolute_workdir(const RunSpec& spec) {
  const std::string& workdir = spec.process.workdir;
  if (workdir.starts_with('/')) return workdir;
  std::error_code error;
  const std::filesystem::path cwd = std::filesystem::current_path(error);
  if (error) {
    throw InvalidSandboxInputError("the current directory cannot be resolved (" + error.message() +
                                   "); run from an existing directory");
  }
  return workdir.empty() ? cwd.string() : (cwd / workdir).string();
}

Prepared prepare(SandboxProvider& provider, const RunSpec& spec) {
  Prepared prepared{spec.process, std::nullopt, nullptr};
  const std::optional<SandboxPolicy> policy = to_sandbox_policy(spec.policy);
  if (!policy) {  // danger-full-access: an explicit unconfined mode; the provider is not asked
    prepared.request.argv = spec.argv;
    return prepared;
  }
  prepared.confined = provider.confine(spec.argv, *policy);
  prepared.request.argv = prepared.confined->argv;
  for (const ProvidedFd& wanted : prepared.confined->provided_fds) {
    prepared.provided.push_back(provided_descriptor(wanted, spec.policy.mode));
    prepared.request.fds.push_back({prepared.provided.back().get(), wanted.fd});
  }
  const RunnerPositions positions = runner_positions(*prepared.confined);
  if (!positions.bwrap && !positions.launcher) return prepared;
  auto status = std::make_unique<StatusChannel>();
  const auto open_channel = [&](std::optional<Pipe>& channel, int target) {
    channel.emplace();
    if (!open_pipe(*channel)) throw std::system_error(errno, std::generic_category(), "pipe2");
    prepared.request.fds.push_back({channel->write.get(), target});
  };
  if (positions.bwrap) open_channel(status->bwrap, kBwrapStatusFd);
  if (positions.launcher) open_channel(status->launcher, kLauncherStatusFd);
  if (positions.bwrap) status->bwrap_workdir = absolute_workdir(spec);
  prepared.request.argv =
      with_runner_flags(prepared.confined->argv, positions, status->bwrap_workdir);
  prepared.status = std::move(status);
  return prepared;
}

// The spawn error as a runner failure, when the runner itself could not be started.
std::optional<std::string> runner_not_started(const std::optional<exec::SpawnError>& error,
                                              const Prepared& prepared) {
  if (!error || !prepared.confined) return std::nullopt;
  if (!is_runner_spawn_failure(*error, prepared.confined->argv.front(), prepared.request.workdir)) {
    return std::nullopt;
  }
  return error->message();
}

// What a run's runners said, out of band or in band: that the runner failed (the command never
// ran), or that the sandbox was in place and the kernel refused to execute the command itself.
struct RunnerReport {
  std::optional<std::string> failure;
  std::optional<int> exec_refused;  // the command's status as a shell reports it: 127 or 126
  std::optional<exec::SpawnError> workdir;  // bwrap's view hides the workdir: it never ran
};

// The errno a runner's "<prefix>...: <strerror>" line names, as far as a shell's status tells
// them apart: ENOENT, or EACCES for any other refusal. Both runners print strerror in the C
// locale (neither calls setlocale), and glibc (bwrap) and musl (landlock-run) word ENOENT as
// glibc's strerrordesc_np does.
std::optional<int> refused_errno(std::string_view line, std::string_view prefix) {
  if (!line.starts_with(prefix)) return std::nullopt;
  const std::size_t colon = line.rfind(": ");
  const std::string_view reason = colon == std::string_view::npos ? "" : line.substr(colon + 2);
  return reason == ::strerrordesc_np(ENOENT) ? ENOENT : EACCES;
}

// A runner's line for its exec of the command. The exec is the runner's last step, after every
// restriction is in place; a shell reports the same refusal as 127 (not found) or 126 (found,
// not executable), and so does danger-full-access.
std::optional<int> exec_refusal(std::string_view line, std::string_view prefix) {
  const std::optional<int> error = refused_errno(line, prefix);
  if (!error) return std::nullopt;
  return *error == ENOENT ? 127 : 126;
}

// Out of band: the launcher's own line, or bwrap's missing exit report. A signal death or a
// timeout is never a runner failure, whatever the channels say.
RunnerReport reported(const exec::Completion& result, StatusChannel& status) {
  if (!result.exit_code || *result.exit_code == 0) return {};
  if (status.launcher) {
    std::string line = read_status(status.launcher->read);
    // The launcher is always the innermost runner: its exec is of the command itself.
    if (auto refused = exec_refusal(line, "landlock-run: exec failed: ")) return {{}, refused, {}};
    if (!line.empty()) return {std::move(line), std::nullopt, {}};
  }
  if (status.bwrap && read_status(status.bwrap->read).find("\"exit-code\"") == std::string::npos) {
    std::string line = bwrap_line(result.err.tail);
    // bwrap execs the command itself only without the launcher; in the layered wrap its exec is
    // of the launcher, and a launcher bwrap cannot execute is a broken runner.
    if (!status.launcher) {
      if (auto refused = exec_refusal(line, "bwrap: execvp ")) return {{}, refused, {}};
    }
    // Our --chdir, refused inside bwrap's view: the same fact as a workdir exec cannot enter.
    if (auto error = refused_errno(line, "bwrap: Can't chdir to ")) {
      return {{}, {}, exec::SpawnError{exec::SpawnStage::kWorkdir, *error, status.bwrap_workdir}};
    }
    return {std::move(line), std::nullopt, {}};
  }
  return {};
}

// In band: the backend's rules over the stderr tail.
RunnerReport ruled(const exec::Completion& result, const ConfinedArgv& confined) {
  const auto match =
      classify_runner_failure(result.exit_code, result.err.tail, confined.runner_failure_rules);
  if (!match) return {};
  return {match->detail, std::nullopt, {}};
}

// The facts of a settled run; nullopt detail when the runner did not fail. A command the kernel
// refused to execute gets a shell's status and is no denial: every mode grants execute on /.
std::optional<std::string> settle(exec::Completion& process, SandboxFacts& sandbox,
                                  const std::optional<ConfinedArgv>& confined,
                                  StatusChannel* status) {
  if (status != nullptr) status->close_write_ends();
  if (!confined || process.spawn_error) return std::nullopt;
  // A run the caller ended (a timeout, an abort) was ended by us, runners and all: never a
  // runner failure, whatever they said on the way out.
  const bool ended = process.timed_out || process.aborted;
  RunnerReport report = ended               ? RunnerReport{}
                        : status != nullptr ? reported(process, *status)
                                            : ruled(process, *confined);
  if (report.exec_refused) process.exit_code = report.exec_refused;
  if (report.workdir) {
    process.exit_code.reset();
    process.spawn_error = std::move(report.workdir);
  }
  sandbox.enforcement = confined->enforcement;
  sandbox.backend = confined->backend;
  sandbox.denied =
      !report.failure && !report.exec_refused && !process.spawn_error &&
      matches_signature(process.exit_code, process.err.tail, confined->denial_signatures);
  return std::move(report.failure);
}

// Every status is decided here, once, from what exec and the runners reported.
RunStatus status_of(const exec::Completion& process, std::optional<std::string> runner_failure) {
  if (runner_failure) return status::RunnerFailed{std::move(*runner_failure)};
  if (process.spawn_error) {
    const exec::SpawnError& error = *process.spawn_error;
    return status::NotStarted{error.stage, error.error, error.path};
  }
  if (process.timed_out) return status::TimedOut{process.exit_code, process.signal};
  if (process.aborted) return status::Aborted{process.exit_code, process.signal};
  if (process.signal) return status::Signalled{*process.signal};
  if (process.exit_code) return status::Exited{*process.exit_code};
  // exec settles every run it started with an exit or a signal; a run with neither never
  // started, and is reported as such rather than as a made-up exit code.
  return status::NotStarted{exec::SpawnStage::kSetup, 0, {}};
}

}  // namespace

std::string status::NotStarted::message() const {
  return exec::SpawnError{stage, error, path}.message();
}

std::optional<int> exit_code_of(const RunStatus& status) {
  return std::visit(
      [](const auto& value) -> std::optional<int> {
        using S = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<S, status::Exited>) {
          return value.code;
        } else if constexpr (std::is_same_v<S, status::TimedOut> ||
                             std::is_same_v<S, status::Aborted>) {
          return value.exit_code;
        } else {
          return std::nullopt;
        }
      },
      status);
}

std::optional<int> signal_of(const RunStatus& status) {
  return std::visit(
      [](const auto& value) -> std::optional<int> {
        using S = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<S, status::Signalled> || std::is_same_v<S, status::TimedOut> ||
                      std::is_same_v<S, status::Aborted>) {
          return value.signal;
        } else {
          return std::nullopt;
        }
      },
      status);
}

RunOutcome outcome_of(exec::Completion completion, SandboxFacts sandbox,
                      std::optional<std::string> runner_failure) {
  RunOutcome outcome;
  outcome.status = status_of(completion, std::move(runner_failure));
  outcome.out = std::move(completion.out);
  outcome.err = std::move(completion.err);
  outcome.duration = completion.duration;
  outcome.bounds = std::move(completion.bounds);
  outcome.sandbox = std::move(sandbox);
  return outcome;
}

RunOutcome SandboxBashExecutor::run(const RunSpec& spec) {
  Prepared prepared = prepare(provider_, spec);
  exec::Completion process = exec::run(prepared.request);
  SandboxFacts sandbox{spec.policy.mode};
  std::optional<std::string> failure = runner_not_started(process.spawn_error, prepared);
  if (failure) {
    process.spawn_error.reset();
    if (prepared.status) prepared.status->close_write_ends();
  } else {
    failure = settle(process, sandbox, prepared.confined, prepared.status.get());
  }
  return outcome_of(std::move(process), std::move(sandbox), std::move(failure));
}

RunOutcome SandboxBashExecutor::run_or_throw(const RunSpec& spec) {
  RunOutcome outcome = run(spec);
  if (const auto* failed = std::get_if<status::RunnerFailed>(&outcome.status)) {
    throw SandboxUnavailableError(*to_confined_mode(spec.policy.mode), failed->detail);
  }
  return outcome;
}

BackgroundJob SandboxBashExecutor::start(const RunSpec& spec) {
  Prepared prepared = prepare(provider_, spec);
  exec::Job job = exec::start(prepared.request);
  if (prepared.status) prepared.status->close_write_ends();
  if (auto failure = runner_not_started(job.spawn_error(), prepared)) {
    throw SandboxUnavailableError(*to_confined_mode(spec.policy.mode), *failure);
  }
  return {std::move(job), spec.policy.mode, std::move(prepared.confined),
          std::move(prepared.status)};
}

BackgroundJob::BackgroundJob(exec::Job job, SandboxMode mode, std::optional<ConfinedArgv> confined,
                             std::unique_ptr<StatusChannel> status)
    : job_(std::move(job)),
      mode_(mode),
      confined_(std::move(confined)),
      status_(std::move(status)) {}
BackgroundJob::BackgroundJob(BackgroundJob&&) noexcept = default;
BackgroundJob& BackgroundJob::operator=(BackgroundJob&&) noexcept = default;
BackgroundJob::~BackgroundJob() = default;

RunOutcome BackgroundJob::wait() {
  exec::Completion process = job_.wait();
  SandboxFacts sandbox{mode_};
  std::optional<std::string> failure = settle(process, sandbox, confined_, status_.get());
  return outcome_of(std::move(process), std::move(sandbox), std::move(failure));
}

}  // namespace dsh::sandbox::consumer
