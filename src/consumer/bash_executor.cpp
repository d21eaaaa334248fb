// SPDX-License-Identifier: Apache-2.0
#include "consumer/bash_executor.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <type_traits>
#include <variant>

#include "base/io.h"
#include "base/pipe.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "consumer/tool_schema.h"
#include "dsh/sandbox/errors.h"
#include "policy/call_policy.h"
#include "policy/git_guard.h"
#include "profiles/denial_line.h"
#include "profiles/profiles.h"

namespace dsh::sandbox::consumer {

namespace {

// Everything the launcher wrote to the status pipe; every writer is gone once the run settled,
// and the read never blocks in case one is not.
std::string read_status(const UniqueFd& fd) {
  ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
  std::string text;
  io::read_all(fd.get(), text);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

bool usable_directory(const std::string& path) {
  struct stat info {};
  const std::string dir = path.empty() ? "." : path;
  return ::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
         ::access(dir.c_str(), X_OK) == 0;
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

std::string runner_spawn_failure_detail(const exec::SpawnError& error, std::string_view runner) {
  // strerrorname_np (glibc 2.32): the code's name, as Node's spawn error spells it.
  const char* name = ::strerrorname_np(error.error);
  return "Error: spawn " + std::string(runner) + " " +
         (name != nullptr ? std::string(name) : "errno " + std::to_string(error.error));
}

// The pipes of the wrap's status channels, in ConfinedArgv::status_channels order; their write
// ends are mapped into the child and closed here once it started.
struct StatusPipes {
  std::vector<Pipe> pipes;
  std::string workdir;    // the directory the wrap's runners were told to enter
  std::string program;    // the command's argv[0] as requested: what a runner's exec refused
  bool evidence = false;  // the launcher records refusals on its channel (--evidence)

  void close_write_ends() {
    for (Pipe& pipe : pipes) pipe.write.reset();
  }
};

namespace {

// One wrap, ready to spawn: the request, the facts it classifies against, its status channel.
struct Prepared {
  exec::Request request;
  std::optional<ConfinedArgv> confined;  // absent under danger-full-access
  std::unique_ptr<StatusPipes> status;
  std::vector<UniqueFd> provided;  // the wrap's provided descriptors, open until the spawn
  // The git state as it was before the run, to check after it (workspace-write only).
  std::optional<policy::GitGuard> git;
  // What the wrap adds to the facts of the memory bound (memory_note).
  std::string memory_note;
};

bool on_tmpfs(const std::string& path) {
  struct statfs info {};
  return ::statfs(path.c_str(), &info) == 0 && info.f_type == TMPFS_MAGIC;
}

// What the wrap does for the memory bound, or leaves to it, beside what the process engine
// enforces (exec::BoundFact::enforced_by). bwrap sizes the tmpfs mounts the command can write
// (profiles/bwrap.h). Landlock alone has none of its own to give: it grants the host's /tmp and
// the writable roots, and a host tmpfs among them holds what the command writes there beyond the
// run, charged to no process (only a cgroup would count it: settle() adds this only without one).
std::string memory_note(const RunSpec& spec, const ConfinedArgv& confined) {
  if (!spec.process.bounds.max_memory_bytes) return {};
  if (std::find(confined.layers.begin(), confined.layers.end(), RunnerLayer::kBwrap) !=
      confined.layers.end()) {
    return "; private /tmp and /dev/shm sized to the bound";
  }
  if (std::find(confined.layers.begin(), confined.layers.end(), RunnerLayer::kLandlockRun) ==
          confined.layers.end() ||
      spec.policy.mode != SandboxMode::kWorkspaceWrite) {
    return {};
  }
  std::vector<std::string> roots = {"/tmp", spec.policy.workspace_root};
  roots.insert(roots.end(), spec.policy.allow_write.begin(), spec.policy.allow_write.end());
  std::string note;
  for (const std::string& root : roots) {
    if (on_tmpfs(root)) note += "; " + root + " is a host tmpfs the run writes, not bounded";
  }
  return note;
}

// Appends the wrap's part to the memory bound's facts: bwrap's sizing always (a cgroup counts
// tmpfs pages too, the sizes hold anyway), Landlock's unbounded tmpfs roots only where no cgroup
// counts them.
void add_memory_note(exec::BoundFact& memory, const std::string& note) {
  if (note.empty() || memory.enforced_by.empty()) return;
  if (note.starts_with("; private") || memory.enforced_by.starts_with("RLIMIT_DATA")) {
    memory.enforced_by += note;
  }
}

// A sealed memfd at offset 0 holding `content`: what a runner reads a provided descriptor from.
// A memfd rather than a pipe: nothing can block on its size, and the seals keep it unchanged.
// The seam has checked that no provided number is also a status channel's.
UniqueFd provided_descriptor(const ProvidedFd& wanted) {
  UniqueFd fd(::memfd_create("dsh-sandbox-provided", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd.get() < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  if (io::write_all(fd.get(), wanted.content) != wanted.content.size()) {
    throw std::system_error(errno, std::generic_category(), "write to memfd");
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) !=
          0 ||
      ::lseek(fd.get(), 0, SEEK_SET) != 0) {
    throw std::system_error(errno, std::generic_category(), "sealing the memfd");
  }
  return fd;
}

// The directory the command must run in, absolute, as bwrap's --chdir needs it: the one rule of
// every consumer (policy::resolve_workdir), so the library and the CLI start a command in the same
// place.
std::string absolute_workdir(const RunSpec& spec) {
  const std::string& workdir = spec.process.workdir;
  return policy::resolve_workdir(
      spec.policy.workspace_root, std::nullopt,
      workdir.empty() ? std::nullopt : std::optional<std::string_view>(workdir));
}

// The confined argv is spawned exactly as confine() returned it: this only opens the
// descriptors it names (provided memfds, status pipes).
Prepared prepare(SandboxProvider& provider, const RunSpec& spec) {
  // One walk of the writable roots serves both the plan inside confine() (which makes what it
  // binds) and the guard taken after it; nothing runs in between.
  const policy::GitWalkScope walk;
  Prepared prepared{spec.process, std::nullopt, nullptr};
  const std::string workdir = absolute_workdir(spec);
  prepared.request.workdir = workdir;
  const std::optional<SandboxPolicy> policy = to_sandbox_policy(spec.policy);
  if (!policy) {  // danger-full-access: an explicit unconfined mode; the provider is not asked
    prepared.request.argv = spec.argv;
    return prepared;
  }
  prepared.confined = provider.confine(
      ConfineRequest{spec.argv, *policy, workdir, true, spec.denial_evidence,
                     spec.process.bounds.max_memory_bytes, spec.earlier_writable_roots});
  prepared.git = policy::GitGuard::for_run(spec.policy, *prepared.confined);
  prepared.memory_note = memory_note(spec, *prepared.confined);
  prepared.request.argv = prepared.confined->argv;
  for (const ProvidedFd& wanted : prepared.confined->provided_fds) {
    prepared.provided.push_back(provided_descriptor(wanted));
    prepared.request.fds.push_back({prepared.provided.back().get(), wanted.fd});
  }
  if (prepared.confined->status_channels.empty()) return prepared;
  auto status = std::make_unique<StatusPipes>();
  status->workdir = workdir;
  status->program = spec.argv.empty() ? std::string() : spec.argv.front();
  for (const StatusChannel& channel : prepared.confined->status_channels) {
    if (channel.layer == RunnerLayer::kLandlockRun) status->evidence = spec.denial_evidence;
  }
  for (const StatusChannel& channel : prepared.confined->status_channels) {
    Pipe& pipe = status->pipes.emplace_back();
    if (!open_pipe(pipe)) throw std::system_error(errno, std::generic_category(), "pipe2");
    prepared.request.fds.push_back({pipe.write.get(), channel.fd});
  }
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
  return runner_spawn_failure_detail(*error, prepared.confined->argv.front());
}

// What a run's runners said, out of band or in band: that the runner failed (the command never
// ran), that the sandbox was in place and the kernel refused to execute the command itself, or
// that a runner could not enter the workdir.
struct RunnerReport {
  std::optional<std::string> failure;
  std::optional<int> exec_refused;  // the command's status as a shell reports it: 127 or 126
  std::optional<exec::SpawnError> workdir;  // a runner's view hides the workdir: it never ran
};

// In band: the backend's rules over the stderr tail.
RunnerReport ruled(const exec::Completion& result, const ConfinedArgv& confined) {
  const auto match =
      classify_runner_failure(result.exit_code, result.err.tail, confined.runner_failure_rules);
  if (!match) return {};
  return {match->detail, std::nullopt, {}};
}

// Whether a launcher's status channel is absent or holds nothing: the launcher writes a line
// before it execs the command, so silence means it ended before that without its failure line.
// Silence is no proof that the runner did not fail: the in-band rule decides then.
bool launcher_silent(const ConfinedArgv& confined, const std::vector<std::string>& texts) {
  for (std::size_t i = 0; i < confined.status_channels.size(); ++i) {
    if (confined.status_channels[i].format != StatusFormat::kLauncherLines) continue;
    if (i >= texts.size() || profiles::landlock_status_silent(texts[i])) return true;
  }
  return false;
}

// Out of band: what each runner wrote on its status channel, read by the runner's own parser,
// and the in-band rule where a launcher's channel stayed silent. A signal death or a timeout is
// never a runner failure, whatever the channels say.
RunnerReport reported(const exec::Completion& result, const ConfinedArgv& confined,
                      const StatusPipes& status, const std::vector<std::string>& texts) {
  if (!result.exit_code || *result.exit_code == 0) return {};
  profiles::RunnerReport report =
      profiles::read_status_reports(confined, texts, result.exit_code, result.err.tail);
  if (report == profiles::RunnerReport{} && launcher_silent(confined, texts)) {
    return ruled(result, confined);
  }
  std::optional<exec::SpawnError> workdir;
  if (report.workdir_refused) {
    workdir = exec::SpawnError{exec::SpawnStage::kWorkdir, *report.workdir_refused, status.workdir};
  }
  return {std::move(report.failure), report.exec_refused, std::move(workdir)};
}

// Under read-only nothing is writable: a write outside the roots is read-only mode's refusal.
void name_read_only(SandboxFacts& sandbox) {
  if (sandbox.mode != SandboxMode::kReadOnly) return;
  for (Denial& denial : sandbox.denials.records) {
    if (denial.rule == "outside-writable-roots") denial.rule = "read-only-mode";
  }
}

// Whether the records name a refusal a change of policy would lift: every rule but a kernel
// object, which no mode grants.
bool evidence_denies(const DenialEvidence& evidence) {
  for (const Denial& denial : evidence.records) {
    if (denial.rule != "kernel-object") return true;
  }
  return evidence.records.empty() && evidence.total > 0;
}

// The facts of a settled run; nullopt detail when the runner did not fail. A command the kernel
// refused to execute gets a shell's status and is no denial: every mode grants execute on /.
std::optional<std::string> settle(exec::Completion& process, SandboxFacts& sandbox,
                                  const std::optional<ConfinedArgv>& confined,
                                  StatusPipes* status) {
  if (status != nullptr) status->close_write_ends();
  if (!confined || process.spawn_error) return std::nullopt;
  // A run the caller ended (a timeout, an abort) was ended by us, runners and all: never a
  // runner failure, whatever they said on the way out.
  const bool ended = process.timed_out || process.aborted;
  std::vector<std::string> texts;
  if (status != nullptr) {
    for (const Pipe& pipe : status->pipes) texts.push_back(read_status(pipe.read));
  }
  RunnerReport report = ended               ? RunnerReport{}
                        : status != nullptr ? reported(process, *confined, *status, texts)
                                            : ruled(process, *confined);
  if (report.exec_refused) {
    // The runner said out of band that its exec of the command failed, after every restriction
    // was in place: the command never started, as when exec refuses the program unconfined
    // (127: not found; 126: not executable).
    process.exit_code.reset();
    process.spawn_error =
        exec::SpawnError{exec::SpawnStage::kProgram, *report.exec_refused == 127 ? ENOENT : EACCES,
                         status != nullptr ? status->program : ""};
  }
  if (report.workdir) {
    process.exit_code.reset();
    process.spawn_error = std::move(report.workdir);
  }
  sandbox.enforcement = confined->enforcement;
  sandbox.strict_enforcement = confined->strict_enforcement;
  sandbox.ungoverned = confined->ungoverned;
  sandbox.backend = confined->backend;
  sandbox.layers = confined->layers;
  const bool classified = !report.failure && !report.exec_refused && !process.spawn_error;
  // The network allow-list's proxy records every refused destination, with or without the
  // launcher's evidence: its channel is ours, never the command's.
  if (status != nullptr) {
    for (std::size_t i = 0; i < texts.size() && i < confined->status_channels.size(); ++i) {
      if (confined->status_channels[i].layer == RunnerLayer::kNetProxy) {
        profiles::collect_denials(texts[i], sandbox.denials);
      }
    }
  }
  if (status != nullptr && status->evidence) {
    // Evidence: the launcher's records, never the command's text (docs/evidence-and-network.md).
    for (std::size_t i = 0; i < texts.size() && i < confined->status_channels.size(); ++i) {
      if (confined->status_channels[i].layer == RunnerLayer::kLandlockRun) {
        profiles::collect_denials(texts[i], sandbox.denials);
      }
    }
    name_read_only(sandbox);
    if (classified) {
      sandbox.denial_source = DenialSource::kKernel;
      sandbox.denied =
          process.exit_code && *process.exit_code != 0 && evidence_denies(sandbox.denials);
    }
    return std::move(report.failure);
  }
  if (classified) sandbox.denial_source = DenialSource::kStderr;
  sandbox.denied = classified && matches_signature(process.exit_code, process.err.tail,
                                                   confined->denial_signatures);
  return std::move(report.failure);
}

// Every status is decided here, once, from what exec and the runners reported.
RunStatus status_of(const exec::Completion& process, std::optional<std::string> runner_failure) {
  if (runner_failure) return status::RunnerFailed{std::move(*runner_failure), process.exit_code};
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
  add_memory_note(process.bounds.memory, prepared.memory_note);
  SandboxFacts sandbox{spec.policy.mode};
  if (prepared.git) sandbox.git_undone = prepared.git->settle();
  sandbox.workspace_root = spec.policy.workspace_root;
  sandbox.network_allow = spec.policy.network_allow.allow;
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
  return {std::move(job),
          spec.policy.mode,
          std::move(prepared.confined),
          std::move(prepared.status),
          std::move(prepared.git),
          std::move(prepared.memory_note)};
}

BackgroundJob::BackgroundJob(exec::Job job, SandboxMode mode, std::optional<ConfinedArgv> confined,
                             std::unique_ptr<StatusPipes> status,
                             std::optional<policy::GitGuard> git, std::string memory_note)
    : job_(std::move(job)),
      mode_(mode),
      confined_(std::move(confined)),
      status_(std::move(status)),
      git_(std::move(git)),
      memory_note_(std::move(memory_note)) {}
BackgroundJob::BackgroundJob(BackgroundJob&&) noexcept = default;
BackgroundJob& BackgroundJob::operator=(BackgroundJob&&) noexcept = default;
BackgroundJob::~BackgroundJob() = default;

RunOutcome BackgroundJob::wait() {
  exec::Completion process = job_.wait();
  add_memory_note(process.bounds.memory, memory_note_);
  SandboxFacts sandbox{mode_};
  if (git_) sandbox.git_undone = git_->settle();
  std::optional<std::string> failure = settle(process, sandbox, confined_, status_.get());
  return outcome_of(std::move(process), std::move(sandbox), std::move(failure));
}

}  // namespace dsh::sandbox::consumer
