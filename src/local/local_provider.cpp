// SPDX-License-Identifier: Apache-2.0
// The chain walk: lazily on the first confine, once per provider lifetime (two
// threads confining at once probe once), unavailable verdict included.
#include "dsh/sandbox/local_provider.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include <fmt/format.h>

#include "base/io.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "local/probe_cache.h"
#include "local/probes.h"
#include "local/runners.h"
#include "local/verdict_codec.h"
#include "policy/effective_policy.h"
#include "seam/call_scope.h"

namespace dsh::sandbox {

namespace {

std::string this_platform() {
#if defined(__linux__)
  return "linux";
#elif defined(__APPLE__)
  return "darwin";
#elif defined(_WIN32)
  return "win32";
#else
  return "unknown";
#endif
}

std::vector<SandboxBackend> platform_chain(const std::string& platform) {
  if (platform == "linux") return {SandboxBackend::kBwrap, SandboxBackend::kLandlock};
  if (platform == "darwin") return {SandboxBackend::kSeatbelt};
  if (platform == "win32") return {SandboxBackend::kWindowsAcl};
  return {};  // no chain: unavailable without probing
}

bool in_chain(const std::vector<SandboxBackend>& chain, SandboxBackend backend) {
  return std::find(chain.begin(), chain.end(), backend) != chain.end();
}

const std::vector<std::string> kProbeCommand = {"/usr/bin/true"};

// A "#!" line longer than this is not one the kernel would run (BINPRM_BUF_SIZE, 256 since 5.1).
constexpr std::size_t kShebangBytes = 256;
// A runnerCommand's files and their interpreters, at most: a bound on what one call checks.
constexpr std::size_t kMaxRunnerFiles = 64;

std::vector<ModeEnforcement> modes_from(
    const std::function<ConfinedArgv(const SandboxPolicy&, const profiles::FsPlan&)>& confine_as,
    const std::vector<std::string>& private_state) {
  std::vector<ModeEnforcement> modes;
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    const SandboxPolicy placeholder{mode, "/nonexistent-probe-workspace", std::nullopt};
    // With the defaults a call gets (the unreadable secrets of this home), as confine has them.
    policy::PathContext context = policy::process_path_context();
    context.private_state = private_state;
    const auto resolved = policy::effective_policy(placeholder, context);
    ConfinedArgv confined = resolved ? confine_as(resolved.value().policy, resolved.value().plan)
                                     : confine_as(placeholder, profiles::FsPlan{});
    modes.push_back(
        {mode, confined.enforcement, std::move(confined.ungoverned), confined.strict_enforcement});
  }
  return modes;
}

// The interpreter a script names on its first line ("#!/bin/sh -e" runs /bin/sh), or empty.
std::string shebang_interpreter(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return {};
  std::string head;
  (void)io::read_all(fd.get(), head, kShebangBytes);
  if (!head.starts_with("#!")) return {};
  const std::size_t start = head.find_first_not_of(" \t", 2);
  if (start == std::string::npos) return {};
  const std::size_t end = head.find_first_of(" \t\r\n", start);
  return head.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The files a runnerCommand starts or hands to its program: every word that names a file (an
// absolute word, or a relative one with a slash that exists), and the interpreter each script
// among them names on its first line. A directory is not a file the runner executes.
std::vector<std::string> runner_command_files(std::span<const std::string> words) {
  std::vector<std::string> files;
  for (const std::string& word : words) {
    std::string path;
    if (word.starts_with('/')) {
      path = word;
    } else if (word.find('/') != std::string::npos && !word.starts_with('-')) {
      path = working_directory() + "/" + word;
      if (::access(path.c_str(), F_OK) != 0) continue;
    } else {
      continue;
    }
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) continue;
    files.push_back(std::move(path));
  }
  for (std::size_t i = 0; i < files.size() && files.size() < kMaxRunnerFiles; ++i) {
    std::string interpreter = shebang_interpreter(files[i]);
    if (interpreter.starts_with('/') &&
        std::find(files.begin(), files.end(), interpreter) == files.end()) {
      files.push_back(std::move(interpreter));
    }
  }
  return files;
}

// The weakest of the modes' readings: `reading` picks the contract's or the strict one.
SandboxEnforcement weakest(const std::vector<ModeEnforcement>& modes,
                           SandboxEnforcement ModeEnforcement::*reading) {
  const bool partial = std::any_of(modes.begin(), modes.end(), [&](const ModeEnforcement& m) {
    return m.*reading == SandboxEnforcement::kPartial;
  });
  return partial ? SandboxEnforcement::kPartial : SandboxEnforcement::kFull;
}

// The roots this call's own mode makes writable: the workspace and the extra writable roots
// under workspace-write, canonical; none under read-only, which grants no host directory.
std::vector<std::string> chosen_writable_roots(const SandboxPolicy& policy) {
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite) return {};
  std::vector<std::string> roots = {canonical_path(policy.workspace_root)};
  for (const std::string& root : policy.allow_write) roots.push_back(canonical_path(root));
  return roots;
}

}  // namespace

struct LocalSandboxProvider::State {
  LocalSandboxConfig config;
  LocalSandboxHooks hooks;
  std::shared_ptr<VerdictStore> store;
  // Why each backend of the chain was unusable when the walk found none: "bwrap (RUNNER): CAUSE
  // (FIX); ...", for the refusal to name what is missing.
  std::string unusable;
  std::string platform;
  std::vector<SandboxBackend> chain;
  profiles::Runners runners;
  std::string temp_dir;

  std::mutex mutex;
  bool decided = false;
  std::optional<profiles::Selection> selection;
  int probes = 0;

  // The first word of the runner that heads `backend`, as located; empty when none is configured.
  std::string runner_of(SandboxBackend backend) const {
    return profiles::program_path(profiles::backend_spec(backend), runners);
  }

  // The runner's trust check; nullopt when it passes, or when the runner is simply missing
  // outside every untrusted root (its probe then reports it missing, as for any other host).
  std::optional<std::string> runner_distrust(const std::string& runner,
                                             std::span<const std::string> roots) const {
    if (hooks.check_runner) {
      auto checked = hooks.check_runner(runner, roots);
      return checked ? std::nullopt : std::optional(checked.error().message);
    }
    auto checked = check_trusted_path(runner, roots);
    if (checked) return std::nullopt;
    const bool beneath_root = std::any_of(
        roots.begin(), roots.end(), [&](const std::string& r) { return is_beneath(runner, r); });
    if (!beneath_root && ::access(runner.c_str(), F_OK) != 0 && errno == ENOENT) {
      return std::nullopt;
    }
    return checked.error().message;
  }

  // A probe executes its runner unconfined: an untrusted runner is never probed.
  BackendReport probe(SandboxBackend backend, std::span<const std::string> roots) {
    BackendReport report;
    report.backend = backend;
    report.runner = runner_of(backend);
    if (!report.runner.empty()) {
      if (const auto distrust = runner_distrust(report.runner, roots)) {
        report.cause = fmt::format("{} cannot be trusted: {}", report.runner, *distrust);
        report.fix =
            fmt::format("install it where no confined run can write: {}", trusted_path_fix());
        return report;
      }
    }
    ++probes;
    if (hooks.probe) {
      report.probed = true;
      hooks.probe(report);
      return report;
    }
    const RunnerLayer layer = profiles::backend_spec(backend).layer;
    local::backend_probe(layer)(report, {runners, temp_dir, config.probe_timeout_ms});
    return report;
  }

  // bwrap wins with landlock-run layered inside when the chain also offers a usable Landlock;
  // `landlock` is that backend's report, probed on demand.
  static profiles::Selection select(const BackendReport& winner,
                                    const std::function<std::optional<BackendReport>()>& landlock) {
    if (winner.backend == SandboxBackend::kLandlock) {
      return {SandboxBackend::kLandlock, local::landlock_features(winner)};
    }
    profiles::Selection chosen{winner.backend, std::nullopt};
    if (winner.backend == SandboxBackend::kBwrap) {
      const std::optional<BackendReport> report = landlock();
      if (report && report->usable) chosen.landlock = local::landlock_features(*report);
    }
    return chosen;
  }

  // bwrap alone starts behind dsh-seccomp-exec (its seccomp program on a descriptor): without a
  // trusted shim that works, bwrap alone is unusable, and `report` (bwrap's) says why.
  bool admit_seccomp_exec(const profiles::Selection& chosen, BackendReport& report,
                          std::span<const std::string> roots) {
    const std::vector<profiles::ComposedLayer> layers =
        profiles::compose_layers(chosen, NetworkPolicy::kInherit);
    const auto selected = std::find_if(layers.begin(), layers.end(), [](const auto& layer) {
      return layer.spec->probe == profiles::RunnerProbe::kSelected;
    });
    if (selected == layers.end()) return true;
    const std::string shim = profiles::program_path(*selected->spec, runners);
    std::optional<std::string> cause;
    if (const auto distrust = runner_distrust(shim, roots)) {
      cause = fmt::format("{} cannot be trusted: {}", shim, *distrust);
    } else if (!hooks.probe) {  // a test's fake probes decide what works in its world
      ++probes;
      cause = local::probe_seccomp_exec(shim, runners.bwrap, config.probe_timeout_ms);
    }
    if (!cause) return true;
    report.usable = false;
    report.cause =
        fmt::format("Landlock is unusable, and bwrap alone loads its seccomp filter through {}: {}",
                    shim, *cause);
    report.fix = local::seccomp_exec_fix();
    return false;
  }

  std::optional<BackendReport> probe_if_in_chain(SandboxBackend backend,
                                                 std::span<const std::string> roots) {
    if (!in_chain(chain, backend)) return std::nullopt;
    return probe(backend, roots);
  }

  std::optional<profiles::Selection> walk_chain(std::span<const std::string> roots) {
    for (const SandboxBackend backend : chain) (void)backend_name(backend);  // rogue entries
    // A sole candidate is selected unprobed: its own refusal at execution time is the
    // fail-closed end. Landlock is the exception: its profile depends on the kernel's features.
    if (chain.size() == 1 && chain.front() != SandboxBackend::kLandlock) {
      return profiles::Selection{chain.front(), std::nullopt};
    }
    unusable.clear();
    for (const SandboxBackend backend : chain) {
      BackendReport report = probe(backend, roots);
      if (!report.usable) {
        unusable += fmt::format("{}{} ({}): {} ({})", unusable.empty() ? "" : "; ",
                                backend_name(backend), report.runner, report.cause, report.fix);
        continue;
      }
      const profiles::Selection chosen = select(
          report, [this, roots] { return probe_if_in_chain(SandboxBackend::kLandlock, roots); });
      if (admit_seccomp_exec(chosen, report, roots)) return chosen;
    }
    return std::nullopt;
  }

  // A runner is executed by path in every later run too: one a confined run could have written
  // would start an impostor, unconfined. Refused as unavailable, naming what to fix.
  void require_trusted_runner(const std::string& runner, std::string_view role,
                              std::span<const std::string> roots, ConfinedSandboxMode mode) const {
    Result<void> checked;
    if (hooks.check_runner) {
      checked = hooks.check_runner(runner, roots);
    } else if (auto path = check_trusted_path(runner, roots); !path) {
      checked = path.error();
    }
    if (checked) return;
    throw SandboxUnavailableError::refused(
        mode, fmt::format("the {} {} cannot be trusted: {}; a confined run could replace it and "
                          "later runs would start the impostor unconfined: install it where no "
                          "confined run can write ({})",
                          role, runner, checked.error().message, trusted_path_fix()));
  }

  // Before any probe: every runner of the chain that is present must be trusted for this call,
  // or the call is refused (a probe would run it, and a selection without it would be weaker).
  void require_trusted_chain(std::span<const std::string> roots, ConfinedSandboxMode mode) const {
    for (const SandboxBackend backend : chain) {
      const std::string runner = runner_of(backend);
      if (runner.empty()) continue;
      if (const auto distrust = runner_distrust(runner, roots)) {
        throw SandboxUnavailableError::refused(
            mode, fmt::format("the {} runner {} cannot be trusted: {}; a confined run could "
                              "replace it and later runs would start the impostor unconfined: "
                              "install it where no confined run can write ({})",
                              backend_name(backend), runner, *distrust, trusted_path_fix()));
      }
    }
  }

  // A runner inside a root this very call makes writable is the caller's choice of root, not a
  // fault of the host: refused as invalid input, naming the root and the way out.
  void refuse_runners_in(const std::vector<std::string>& chosen, ConfinedSandboxMode mode) const {
    std::vector<std::pair<std::string, std::string>> present;  // role, runner
    if (!config.runner_command.empty()) {
      present.emplace_back("runnerCommand program", config.runner_command.front());
    } else {
      for (const SandboxBackend backend : chain) {
        const std::string runner = runner_of(backend);
        if (!runner.empty()) {
          present.emplace_back(fmt::format("{} runner", backend_name(backend)), runner);
        }
      }
    }
    for (const auto& [role, runner] : present) {
      if (const auto root = policy::writable_root_covering(canonical_path(runner), chosen)) {
        throw InvalidSandboxInputError(fmt::format(
            "the writable root {} (the workspace or an extra writable root of this {} call) "
            "contains the {} {}: a confined run could replace it and later runs would start the "
            "impostor unconfined. Choose a workspace and writable roots that do not contain it, "
            "or run read-only",
            *root, wire_name(mode), role, runner));
      }
    }
  }

  // The program, every file its words name and the interpreters of those scripts: a script the
  // runner's interpreter reads is as much the runner as the interpreter. A missing file outside
  // every untrusted root fails at execution, as a runner failure.
  void require_trusted_runner_command(std::span<const std::string> roots,
                                      ConfinedSandboxMode mode) const {
    for (const std::string& file : runner_command_files(config.runner_command)) {
      if (const auto distrust = runner_distrust(file, roots)) {
        throw SandboxUnavailableError::refused(
            mode, fmt::format("the runnerCommand file {} cannot be trusted: {}; a confined run "
                              "could replace it and later runs would start the impostor "
                              "unconfined: install it where no confined run can write ({})",
                              file, *distrust, trusted_path_fix()));
      }
    }
  }

  // The allow-list's proxy, as a call asking for the list would meet it: trusted (never started
  // otherwise), behind a backend that can force every connection through it, and working.
  ComponentReport probe_netproxy(std::span<const std::string> roots,
                                 const std::optional<profiles::Selection>& chosen) const {
    const profiles::RunnerSpec& spec = profiles::netproxy_spec();
    ComponentReport report{std::string(layer_name(spec.layer)), "network allow-list",
                           profiles::program_path(spec, runners)};
    if (const auto distrust = runner_distrust(report.runner, roots)) {
      report.cause = fmt::format("{} cannot be trusted: {}", report.runner, *distrust);
      report.fix =
          fmt::format("install it where no confined run can write: {}", trusted_path_fix());
      return report;
    }
    const bool own_runner = !config.runner_command.empty();
    const bool behind_bwrap = !own_runner && chosen && chosen->backend == SandboxBackend::kBwrap;
    if (auto reason = profiles::netproxy_unsupported_reason(behind_bwrap)) {
      report.cause = *reason;
      report.fix = own_runner ? "drop runnerCommand from the config to use a network allow-list"
                              : "make bwrap usable (its backend report above says why it is not)";
      return report;
    }
    local::probe_netproxy(report, config.probe_timeout_ms);
    return report;
  }

  // Every runner the selection's argv starts, in the order of its layers (the allow-list's proxy
  // heads the chain when the policy has one), each file once.
  void require_trusted_runners(const profiles::Selection& chosen, const SandboxPolicy& policy,
                               std::span<const std::string> roots) const {
    std::vector<std::string> checked;
    for (const profiles::ComposedLayer& layer : profiles::compose_layers(chosen, policy.network)) {
      const std::string runner = profiles::program_path(*layer.spec, runners);
      if (runner.empty()) {
        throw SandboxUnavailableError::refused(
            policy.mode, fmt::format("no {0} is configured; install the {0}", layer.spec->role));
      }
      if (std::find(checked.begin(), checked.end(), runner) != checked.end()) continue;
      require_trusted_runner(runner, layer.spec->role, roots, policy.mode);
      checked.push_back(runner);
    }
  }

  // What confine answers per confined mode, through the composer confine itself calls: a pure
  // wrap of a placeholder command under a placeholder workspace (neither changes enforcement).
  std::vector<ModeEnforcement> modes_of(const profiles::Selection& chosen) const {
    return modes_from(
        [&](const SandboxPolicy& policy, const profiles::FsPlan& plan) {
          return profiles::wrap(chosen, runners, kProbeCommand, policy, {}, temp_dir, {}, plan);
        },
        hooks.private_state);
  }
  std::vector<ModeEnforcement> modes_of_runner_command() const {
    return modes_from(
        [&](const SandboxPolicy& policy, const profiles::FsPlan& plan) {
          return profiles::wrap_runner_command(config.runner_command,
                                               config.runner_failure_signatures, kProbeCommand,
                                               policy, config.runner_accepts_hardening, plan);
        },
        hooks.private_state);
  }

  std::optional<profiles::Selection> verdict(const SandboxPolicy& policy,
                                             std::span<const std::string> roots) {
    const std::lock_guard lock(mutex);
    if (decided) return selection;
    if (store) {
      if (const auto text = store->load(policy)) {
        selection = local::decode_selection(*text, chain, runners.landlock_run);
      }
    }
    if (!selection) {
      selection = walk_chain(roots);
      if (selection && store) {
        store->save(policy, local::encode_selection(*selection, runners.landlock_run));
      }
    }
    decided = true;
    return selection;
  }

  // confine_validated's two ends: the operator's runnerCommand in place of every backend, and
  // the refusals of a chosen backend that cannot give this policy what it needs.
  ConfinedArgv wrap_for_runner_command(std::span<const std::string> argv,
                                       const SandboxPolicy& policy, const profiles::FsPlan& plan,
                                       std::span<const std::string> untrusted) const;
  void refuse_unsupported(const profiles::Selection& chosen, const SandboxPolicy& policy,
                          const profiles::FsPlan& plan, const ConfineRequest& request) const;

  // The roots whose files this call trusts for nothing: what its mode makes writable (`chosen`)
  // plus what earlier runs could write, when the call or the caller says; else the policy's own
  // roots.
  std::vector<std::string> call_untrusted_roots(
      const SandboxPolicy& policy, const std::optional<std::vector<std::string>>& call_earlier,
      const std::vector<std::string>& chosen) const {
    const auto& earlier = call_earlier ? call_earlier : hooks.earlier_writable_roots;
    if (earlier) {
      // A read-only call on / or on an ancestor of the runners distrusts no root it does not
      // make writable.
      std::vector<std::string> extra = chosen;
      extra.insert(extra.end(), earlier->begin(), earlier->end());
      return untrusted_roots("", extra, temp_dir);
    }
    return untrusted_roots(policy, policy.allow_write, temp_dir);
  }
};

LocalSandboxProvider::LocalSandboxProvider(LocalSandboxConfig config, LocalSandboxHooks hooks,
                                           std::shared_ptr<VerdictStore> store)
    : state_(std::make_unique<State>()) {
  validate_config(config).value();
  State& s = *state_;
  s.platform = hooks.platform.empty() ? this_platform() : hooks.platform;
  s.chain = hooks.chain.value_or(platform_chain(s.platform));
  s.runners = local::locate_runners(config, hooks);
  s.temp_dir = hooks.temp_dir.empty() ? user_temp_dir() : hooks.temp_dir;
  s.config = std::move(config);
  s.hooks = std::move(hooks);
  s.store = std::move(store);
}

LocalSandboxProvider::~LocalSandboxProvider() = default;

namespace {

// A workspace-write root at or above the jobs' place without $XDG_RUNTIME_DIR (/var/tmp, /var)
// would let the run plant that directory, and jobs in it, for a later call that knows nothing of
// this workspace: refused, as an extra writable root over it is.
void refuse_workspace_over_jobs(const SandboxPolicy& policy) {
  const std::string jobs = local::fallback_jobs_base();
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite || jobs.empty()) return;
  const std::string canonical = canonical_path(jobs);
  if (!is_beneath(canonical, policy.workspace_root) && !is_beneath(jobs, policy.workspace_root)) {
    return;
  }
  throw InvalidSandboxInputError(fmt::format(
      "the workspace {} contains {}, where background jobs are kept without $XDG_RUNTIME_DIR; a "
      "workspace-write run could plant jobs there. Pass a narrower --workspace",
      text::quoted(policy.workspace_root), text::quoted(jobs)));
}

// The path rules made effective once (canonical, with their defaults), and the plan every
// generator reads; extra writable roots are as untrusted as the workspace.
policy::EffectivePolicy effective_call_policy(const SandboxPolicy& policy,
                                              const std::vector<std::string>& private_state) {
  // The per-user cache directory (verdicts, the record of writable workspaces, jobs) decides
  // later calls: no extra writable root may reach it.
  policy::PathContext context = policy::process_path_context();
  context.trusted_state.push_back(local::user_cache_directory());
  // The jobs' place without one, always: a call that has $XDG_RUNTIME_DIR must not plant it for
  // a later call that has none.
  context.trusted_state.push_back(local::fallback_jobs_base());
  refuse_workspace_over_jobs(policy);
  // Other jobs' output and kept spills are the caller's, not the command's to read.
  context.private_state = private_state;
  auto resolved = policy::effective_policy(policy, context);
  if (!resolved) throw InvalidSandboxInputError(resolved.error().message);
  return std::move(resolved).value();
}

}  // namespace

ConfinedArgv LocalSandboxProvider::State::wrap_for_runner_command(
    std::span<const std::string> argv, const SandboxPolicy& policy, const profiles::FsPlan& plan,
    std::span<const std::string> untrusted) const {
  require_trusted_runner_command(untrusted, policy.mode);
  if (const auto reason =
          profiles::layers_refusal(profiles::operator_layers(), {}, runners, policy, plan)) {
    throw SandboxUnavailableError::refused(policy.mode, *reason);
  }
  return profiles::wrap_runner_command(config.runner_command, config.runner_failure_signatures,
                                       argv, policy, config.runner_accepts_hardening, plan);
}

void LocalSandboxProvider::State::refuse_unsupported(const profiles::Selection& chosen,
                                                     const SandboxPolicy& policy,
                                                     const profiles::FsPlan& plan,
                                                     const ConfineRequest& request) const {
  const profiles::RunNeeds needs{request.workdir, request.status_channels, request.denial_evidence};
  if (const auto reason =
          profiles::unsupported_reason(chosen, runners, policy, plan, needs, ::geteuid() == 0)) {
    throw SandboxUnavailableError::refused(policy.mode, *reason);
  }
  // A feature's program is probed only by `probe`: a call checks that it is there to start.
  for (const profiles::ComposedLayer& layer : profiles::compose_layers(chosen, policy.network)) {
    if (layer.spec->probe != profiles::RunnerProbe::kComponent) continue;
    const std::string program = profiles::program_path(*layer.spec, runners);
    if (::access(program.c_str(), X_OK) == 0) continue;
    throw SandboxUnavailableError::refused(
        policy.mode, fmt::format("the {} {} is missing or not executable; install {} beside "
                                 "dsh-sandbox (cmake --install and the .deb do)",
                                 layer.spec->role, program, layer.spec->installed_name));
  }
}

ConfinedArgv LocalSandboxProvider::confine_validated(const ConfineRequest& request) {
  const CallScope call;  // each runner walked once, though the chain and the argv both check it
  State& s = *state_;
  const std::span<const std::string> argv = request.argv;
  SandboxPolicy policy = request.policy;
  // The real directory, not the spelling: a root given through a symlink or `..` confines
  // exactly the directory the command's chdir would reach. A caller that resolved it once
  // (ResolvedWorkspace) hands it over as is.
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite && !policy.resolved_workspace) {
    policy.workspace_root = resolve_workspace_root(policy.workspace_root);
  }
  const policy::EffectivePolicy effective = effective_call_policy(policy, s.hooks.private_state);
  policy = effective.policy;
  const profiles::FsPlan& plan = effective.plan;
  const std::vector<std::string> chosen = chosen_writable_roots(policy);
  s.refuse_runners_in(chosen, policy.mode);
  const std::vector<std::string> untrusted =
      s.call_untrusted_roots(policy, request.earlier_writable_roots, chosen);
  if (!s.config.runner_command.empty()) {
    return s.wrap_for_runner_command(argv, policy, plan, untrusted);
  }
  s.require_trusted_chain(untrusted, policy.mode);
  const std::optional<profiles::Selection> selection = s.verdict(policy, untrusted);
  if (!selection) {
    std::string why;
    {
      const std::lock_guard lock(s.mutex);  // a concurrent walk rewrites it
      why = s.unusable;
    }
    if (why.empty()) throw SandboxUnavailableError(policy.mode);
    throw SandboxUnavailableError::no_usable_backend(policy.mode, why);
  }
  s.refuse_unsupported(*selection, policy, plan, request);
  s.require_trusted_runners(*selection, policy, untrusted);
  // Only Seatbelt matches resolved paths; the others take the root as resolved above.
  const std::vector<std::string> roots = selection->backend == SandboxBackend::kSeatbelt
                                             ? writable_roots(policy, s.temp_dir)
                                             : std::vector<std::string>{};
  ConfinedArgv confined = profiles::wrap(
      *selection, s.runners, argv, policy, roots, s.temp_dir,
      {request.workdir, request.status_channels, request.denial_evidence, request.tmpfs_bytes},
      plan);
  if (selection->backend == SandboxBackend::kBwrap) {
    if (auto too_long = profiles::bwrap_argv_too_long(confined.argv)) {
      throw InvalidSandboxInputError(*too_long);
    }
  }
  return confined;
}

ProbeSummary LocalSandboxProvider::probe_all() {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  ProbeSummary summary{s.platform, {}, {}, {}, {}};
  // No call, no workspace: the roots every call has.
  const std::vector<std::string> untrusted = untrusted_roots(
      "", s.hooks.earlier_writable_roots.value_or(std::vector<std::string>{}), s.temp_dir);
  for (const SandboxBackend backend : s.chain) {
    summary.backends.push_back(s.probe(backend, untrusted));
  }
  const auto report_of = [&](SandboxBackend backend) -> std::optional<BackendReport> {
    for (const BackendReport& report : summary.backends) {
      if (report.backend == backend) return report;
    }
    return std::nullopt;
  };
  // What selecting each usable backend would give, from the reports as probed (before their
  // enforcement becomes the weakest of their modes below).
  std::vector<std::optional<profiles::Selection>> selections;
  for (BackendReport& report : summary.backends) {
    if (!report.usable) {
      selections.emplace_back(std::nullopt);
      continue;
    }
    const profiles::Selection chosen =
        State::select(report, [&] { return report_of(SandboxBackend::kLandlock); });
    selections.push_back(s.admit_seccomp_exec(chosen, report, untrusted) ? std::optional(chosen)
                                                                         : std::nullopt);
  }
  s.selection.reset();
  for (const std::optional<profiles::Selection>& selection : selections) {
    if (!selection) continue;
    s.selection = selection;
    summary.selected = profiles::selection_name(*selection);
    summary.modes = s.modes_of(*selection);
    break;
  }
  for (std::size_t i = 0; i < summary.backends.size(); ++i) {
    if (!selections[i]) continue;
    BackendReport& report = summary.backends[i];
    report.modes = s.modes_of(*selections[i]);
    report.enforcement = weakest(report.modes, &ModeEnforcement::enforcement);
    report.strict_enforcement = weakest(report.modes, &ModeEnforcement::strict_enforcement);
  }
  s.decided = true;
  summary.components.push_back(s.probe_netproxy(untrusted, s.selection));
  // confine uses the operator's runner instead of the chain: so does the probe's answer.
  if (!s.config.runner_command.empty()) {
    summary.runner_command = s.config.runner_command;
    summary.modes = s.modes_of_runner_command();
    const std::vector<RunnerLayer> layers = {RunnerLayer::kRunnerCommand};
    summary.selected = backend_label(layers);
  }
  return summary;
}

void LocalSandboxProvider::invalidate_verdict() {
  const std::lock_guard lock(state_->mutex);
  state_->decided = false;
  state_->selection.reset();
  if (state_->store) state_->store->invalidate();
}

int LocalSandboxProvider::probes_run() const {
  const std::lock_guard lock(state_->mutex);
  return state_->probes;
}

}  // namespace dsh::sandbox
