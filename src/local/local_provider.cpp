// SPDX-License-Identifier: Apache-2.0
// The chain walk (spec §2.2): lazily on the first confine, once per provider lifetime (two
// threads confining at once probe once), unavailable verdict included.
#include "dsh/sandbox/local_provider.h"

#include <algorithm>
#include <mutex>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "probes.h"
#include "runners.h"
#include "verdict_codec.h"

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

}  // namespace

struct LocalSandboxProvider::State {
  LocalSandboxConfig config;
  LocalSandboxHooks hooks;
  std::shared_ptr<VerdictStore> store;
  std::string platform;
  std::vector<SandboxBackend> chain;
  profiles::Runners runners;
  std::string temp_dir;

  std::mutex mutex;
  bool decided = false;
  std::optional<profiles::Selection> selection;
  int probes = 0;

  std::string runner_of(SandboxBackend backend) const {
    switch (backend) {
      case SandboxBackend::kBwrap:
        return runners.bwrap;
      case SandboxBackend::kLandlock:
        return runners.landlock_run;
      case SandboxBackend::kSeatbelt:
        return runners.sandbox_exec;
      case SandboxBackend::kWindowsAcl:
        return runners.windows_acl.empty() ? std::string() : runners.windows_acl.front();
    }
    throw std::logic_error("unreachable variant in SandboxBackend");
  }

  BackendReport probe(SandboxBackend backend) {
    BackendReport report;
    report.backend = backend;
    report.runner = runner_of(backend);
    ++probes;
    if (hooks.probe) {
      report.probed = true;
      hooks.probe(report);
      return report;
    }
    const double timeout = config.probe_timeout_ms;
    switch (backend) {
      case SandboxBackend::kBwrap:
        local::probe_bwrap(report, timeout);
        break;
      case SandboxBackend::kLandlock:
        local::probe_landlock(report, timeout);
        break;
      case SandboxBackend::kSeatbelt:
        local::probe_seatbelt(report, timeout);
        break;
      case SandboxBackend::kWindowsAcl:
        local::probe_windows_acl(report, runners.windows_acl, temp_dir, timeout);
        break;
    }
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

  std::optional<BackendReport> probe_if_in_chain(SandboxBackend backend) {
    if (!in_chain(chain, backend)) return std::nullopt;
    return probe(backend);
  }

  std::optional<profiles::Selection> walk_chain() {
    for (const SandboxBackend backend : chain) (void)backend_name(backend);  // rogue entries
    // A sole candidate is selected unprobed: its own refusal at execution time is the
    // fail-closed end. Landlock is the exception: its profile depends on the kernel's features.
    if (chain.size() == 1 && chain.front() != SandboxBackend::kLandlock) {
      return profiles::Selection{chain.front(), std::nullopt};
    }
    for (const SandboxBackend backend : chain) {
      const BackendReport report = probe(backend);
      if (report.usable) {
        return select(report, [this] { return probe_if_in_chain(SandboxBackend::kLandlock); });
      }
    }
    return std::nullopt;
  }

  std::optional<profiles::Selection> verdict(const SandboxPolicy& policy) {
    const std::lock_guard lock(mutex);
    if (decided) return selection;
    if (store) {
      if (const auto text = store->load(policy)) selection = local::decode_selection(*text);
    }
    if (!selection) {
      selection = walk_chain();
      if (selection && store) store->save(policy, local::encode_selection(*selection));
    }
    decided = true;
    return selection;
  }
};

LocalSandboxProvider::LocalSandboxProvider(LocalSandboxConfig config, LocalSandboxHooks hooks,
                                           std::shared_ptr<VerdictStore> store)
    : state_(std::make_unique<State>()) {
  validate_config(config).value();
  State& s = *state_;
  s.platform = hooks.platform.empty() ? this_platform() : hooks.platform;
  s.chain = hooks.chain.value_or(platform_chain(s.platform));
  s.runners.bwrap = local::locate_bwrap(config.bwrap_path);
  s.runners.landlock_run =
      hooks.launcher_path.empty() ? local::launcher_beside_self() : hooks.launcher_path;
  if (!hooks.sandbox_exec_path.empty()) s.runners.sandbox_exec = hooks.sandbox_exec_path;
  s.runners.windows_acl = hooks.windows_acl_runner;
  s.temp_dir = hooks.temp_dir.empty() ? user_temp_dir() : hooks.temp_dir;
  s.config = std::move(config);
  s.hooks = std::move(hooks);
  s.store = std::move(store);
}

LocalSandboxProvider::~LocalSandboxProvider() = default;

ConfinedArgv LocalSandboxProvider::confine_validated(std::span<const std::string> argv,
                                                     const SandboxPolicy& requested) {
  State& s = *state_;
  SandboxPolicy policy = requested;
  // The real directory, not the spelling: a root given through a symlink or `..` confines
  // exactly the directory the command's chdir would reach.
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite) {
    policy.workspace_root = resolve_workspace_root(policy.workspace_root);
  }
  if (!s.config.runner_command.empty()) {
    return profiles::wrap_runner_command(s.config.runner_command,
                                         s.config.runner_failure_signatures, argv, policy);
  }
  const std::optional<profiles::Selection> selection = s.verdict(policy);
  if (!selection) throw SandboxUnavailableError(policy.mode);
  if (const auto reason = profiles::unsupported_reason(*selection, s.runners, policy)) {
    throw SandboxUnavailableError(policy.mode, *reason);
  }
  // Only Seatbelt matches resolved paths; the others take the root as resolved above.
  const std::vector<std::string> roots = selection->backend == SandboxBackend::kSeatbelt
                                             ? writable_roots(policy, s.temp_dir)
                                             : std::vector<std::string>{};
  return profiles::wrap(*selection, s.runners, argv, policy, roots, s.temp_dir);
}

ProbeSummary LocalSandboxProvider::probe_all() {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  ProbeSummary summary{s.platform, {}, {}};
  for (const SandboxBackend backend : s.chain) summary.backends.push_back(s.probe(backend));
  const auto report_of = [&](SandboxBackend backend) -> std::optional<BackendReport> {
    for (const BackendReport& report : summary.backends) {
      if (report.backend == backend) return report;
    }
    return std::nullopt;
  };
  s.selection.reset();
  for (const BackendReport& report : summary.backends) {
    if (!report.usable) continue;
    s.selection = State::select(report, [&] { return report_of(SandboxBackend::kLandlock); });
    summary.selected = profiles::selection_name(*s.selection);
    break;
  }
  s.decided = true;
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
