// SPDX-License-Identifier: Apache-2.0
// LocalSandboxProvider: the seam's implementation on this host. It picks, per host,
// what actually confines a command (bwrap, then Landlock on Linux, with landlock-run inside bwrap
// when both work; Seatbelt on macOS; the ACL runner on Windows). It probes the chain in order
// (a sole candidate unprobed, but for Landlock, whose profile depends on the kernel's features),
// caches the verdict for its lifetime and in the caller's VerdictStore (invalidate_verdict
// forgets it), and never passes a command through: no usable backend is SANDBOX_UNAVAILABLE.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dsh/sandbox/backend.h"
#include "dsh/sandbox/provider.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

struct LocalSandboxConfig {
  // An operator's own runner, given bwrap-compatible profile arguments; empty: use the chain.
  std::vector<std::string> runner_command;
  // Required with runner_command: the stderr lines by which that runner reports its failures.
  std::vector<std::string> runner_failure_signatures;
  double probe_timeout_ms = 5000;
  // An absolute bwrap path to use instead of the trusted locations (/usr/bin/bwrap first).
  std::string bwrap_path;
  // The operator's word that runner_command accepts bwrap's hardening options (--unshare-ipc,
  // --new-session, --cap-drop ALL, --unshare-net): only then does it get them. Off: the
  // documented bwrap-compatible profile; enforcement stays full (the operator's assertion), the
  // strict reading is partial with the gaps named, and a denied network is refused.
  bool runner_accepts_hardening = false;

  bool operator==(const LocalSandboxConfig&) const = default;
};

// The reference's validation, in its order and with its exact messages, plus:
// an absolute runner program and bwrap path, and no NUL bytes.
Result<void> validate_config(const LocalSandboxConfig& config);

// Reads the provider's keys from a JSON config document (runnerCommand,
// runnerFailureSignatures, runnerAcceptsHardening, probeTimeoutMs, bwrapPath); the policy's keys
// (mode, allowWrite, denyWrite, denyRead, allowCache, networkAllow, networkDeny) are allowed and
// read elsewhere. Unknown keys are errors: a misspelt key must not silently leave a default in
// force.
Result<LocalSandboxConfig> config_from_json(std::string_view text);

// What confine would answer for one confined mode: the enforcement (the contract's and the strict
// reading) and what is not governed, computed by the same composer confine uses (so probe and
// confine cannot disagree).
struct ModeEnforcement {
  ConfinedSandboxMode mode = ConfinedSandboxMode::kReadOnly;
  SandboxEnforcement enforcement = SandboxEnforcement::kFull;  // ConfinedArgv::enforcement
  std::vector<std::string> ungoverned;
  // ConfinedArgv::strict_enforcement: partial exactly when `ungoverned` is not empty.
  SandboxEnforcement strict_enforcement = SandboxEnforcement::kFull;

  bool operator==(const ModeEnforcement&) const = default;
};

// One backend's verdict on this host, with the reason and the fix when it is unusable.
struct BackendReport {
  SandboxBackend backend = SandboxBackend::kBwrap;
  std::string runner;  // the absolute runner path probed
  bool probed = false;
  bool usable = false;
  SandboxEnforcement enforcement = SandboxEnforcement::kPartial;
  int landlock_abi = 0;           // landlock only: the kernel's ABI (0 when unknown)
  bool landlock_seccomp = false;  // landlock only: its seccomp hardening is available
  std::string cause;              // why it is unusable, one line
  std::string fix;                // what to do about it, one line
  // When usable: per confined mode, what confine would answer were this backend selected (bwrap
  // with landlock-run inside when the chain's Landlock is usable too). `enforcement` above is
  // then the weakest of their contract readings ("full" only when every mode is), and
  // `strict_enforcement` the weakest of their strict readings.
  std::vector<ModeEnforcement> modes;
  SandboxEnforcement strict_enforcement = SandboxEnforcement::kPartial;
};

// A program a feature starts besides the backend's runners (the network allow-list's proxy
// dsh-netproxy): located beside the launcher, trust-checked like it, then started on a harmless
// command. Usable when a call needing the feature would start it on this host.
struct ComponentReport {
  std::string component;  // "netproxy"
  std::string feature;    // what needs it, e.g. "network allow-list"
  std::string runner;     // the absolute program path checked
  bool probed = false;    // it was started (never when it failed the trust check)
  bool usable = false;
  std::string cause;  // why it is unusable, one line
  std::string fix;    // what to do about it, one line
};

// What `dsh-sandbox probe` shows: every backend of the chain, and the one confine would use.
struct ProbeSummary {
  std::string platform;
  std::vector<BackendReport> backends;
  std::string selected;  // e.g. "bwrap+landlock"; empty when no backend is usable
  // Per confined mode, what confine answers on this host with this config (the selected
  // backend's, or the operator's runnerCommand's); empty when nothing is usable.
  std::vector<ModeEnforcement> modes;
  // The operator's runnerCommand, which confine uses instead of the chain: set when configured.
  std::vector<std::string> runner_command;
  // The programs features need beyond the selected backend (the allow-list's proxy).
  std::vector<ComponentReport> components;
};

// Where a verdict can be kept across processes (the CLI keeps one per user). The provider
// passes the policy so a store can refuse to serve or keep an entry a confined command could
// have written. A stale entry can only select a backend that then refuses.
class VerdictStore {
 public:
  virtual ~VerdictStore() = default;
  virtual std::optional<std::string> load(const SandboxPolicy& policy) = 0;
  virtual void save(const SandboxPolicy& policy, const std::string& verdict) = 0;
  virtual void invalidate() = 0;
};

// Test hooks, as the reference's internals: every path is testable on Linux.
struct LocalSandboxHooks {
  std::string platform;                              // default: this build's platform
  std::optional<std::vector<SandboxBackend>> chain;  // default: the platform's chain
  // Replaces a backend's probe; receives the report to fill (runner already set).
  std::function<void(BackendReport&)> probe;
  // default: landlock-run beside /proc/self/exe (local::locate_runners); a caller that located
  // it already (the CLI, for its verdict store's key) passes it so it is located once.
  std::string launcher_path;
  std::string sandbox_exec_path;  // default: /usr/bin/sandbox-exec
  // bwrap alone's exec shim (it gives bwrap its seccomp program); default: dsh-seccomp-exec
  // beside the launcher, where it is installed.
  std::string seccomp_exec_path;
  std::vector<std::string> windows_acl_runner;  // default: none (unusable)
  std::string temp_dir;                         // default: user_temp_dir()
  // The roots earlier confined runs could write (the caller's record of writable roots: earlier
  // workspaces, extra writable roots and cache directories; a session's earlier workspaces): no
  // runner, runnerCommand file or interpreter beneath one is trusted. When given, the runners'
  // trust check holds a call to these, /tmp, $TMPDIR and what the call's own mode makes writable
  // (the workspace and extra roots under workspace-write, nothing under read-only). Default: a
  // read-only call distrusts its workspace too, as if an earlier workspace-write run had written
  // it.
  std::optional<std::vector<std::string>> earlier_writable_roots;
  // The caller's own state that no confined run may read, each made unreadable in every mode
  // where it exists (the CLI's: its cache directory with the background jobs' output, and the
  // spill directory with the kept full output of earlier runs). Default: none.
  std::vector<std::string> private_state;
  // Replaces the trust check of each runner file a confined argv starts (default:
  // check_trusted_path against untrusted_roots of the call): for runners that only exist in a
  // test. An error refuses the call as SANDBOX_UNAVAILABLE.
  std::function<Result<void>(const std::string& runner, std::span<const std::string> roots)>
      check_runner;
};

class LocalSandboxProvider final : public SandboxProvider {
 public:
  // Throws InvalidSandboxInputError when validate_config fails.
  explicit LocalSandboxProvider(LocalSandboxConfig config = {}, LocalSandboxHooks hooks = {},
                                std::shared_ptr<VerdictStore> store = nullptr);
  ~LocalSandboxProvider() override;

  // Probes every backend of the chain (not stopping at the first usable) and makes the result
  // this provider's verdict.
  ProbeSummary probe_all();

  // Forgets the verdict (and the store's entry): call it when the selected runner refused at
  // execution time, so the next confine probes again.
  void invalidate_verdict();

  // How many probes ran (tests check that verdicts are cached).
  int probes_run() const;

 private:
  ConfinedArgv confine_validated(const ConfineRequest& request) override;

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dsh::sandbox
