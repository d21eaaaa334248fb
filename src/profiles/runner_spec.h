// SPDX-License-Identifier: Apache-2.0
// What one runner is, as one value: its argv, run flags, status channel, failure rule, denial
// dialect, what it leaves ungoverned and refuses, and how it is located, trusted, probed and
// installed. Each runner defines its RunnerSpec in its own home (bwrap.cpp, landlock_run.cpp,
// netproxy.cpp, runner_command.cpp, seatbelt.cpp, windows_acl.cpp); runner_specs() is the one
// table that registers them. A selection is first composed into its layers (profiles.h
// compose_layers), and every consumer (the argv, the facts, the wire's `layers`, the trust and
// probe steps of src/local, the install check) reads that list and these specs: none switches on
// the backend. Pure: no I/O.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/backend.h"
#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "profiles/fs_plan.h"
#include "profiles/runner_report.h"

namespace dsh::sandbox::profiles {

struct Selection;  // profiles.h

// The operator's own runner (LocalSandboxConfig): its words, the stderr lines by which it
// reports its failures, and whether it accepts bwrap's hardening options.
struct OperatorRunner {
  std::vector<std::string> command;
  std::vector<std::string> failure_signatures;
  bool accepts_hardening = false;
};

// Absolute paths of the runners, located once (local::locate_runners) and passed as a value.
struct Runners {
  std::string bwrap;
  std::string landlock_run;
  std::string sandbox_exec = "/usr/bin/sandbox-exec";
  std::vector<std::string> windows_acl;  // the runner's argv prefix, e.g. [node, runner.js]
  std::string netproxy;                  // dsh-netproxy, for the network allow-list
  std::string seccomp_exec;              // dsh-seccomp-exec, in front of bwrap alone
  OperatorRunner operator_runner;        // runnerCommand, when configured
};

// Where a layer runs: on the host, or inside bwrap's namespaces (whose /dev is private and whose
// network namespace holds lo alone).
enum class RunnerPlace { kHost, kInsideBwrap };

// Who puts a runner on the host.
enum class RunnerSource {
  kShipped,   // built here, installed beside dsh-sandbox (cmake --install, the .deb)
  kHost,      // the host's own program: a distribution's bwrap, macOS's sandbox-exec
  kOperator,  // named by the operator's config or by the embedding program
};

// When a runner is started before a call runs it (src/local/probes.cpp runs it).
enum class RunnerProbe {
  kBackend,    // as a backend of the platform's chain, to choose one
  kComponent,  // as a feature's program, shown among the probe's components
  kSelected,   // once its backend is chosen, before that choice stands (bwrap alone's shim)
  kNever,      // the operator's runner: its own refusal at run time is the fail-closed end
};

struct RunnerSpec;

// One layer of a composed argv: a runner and where it runs.
struct ComposedLayer {
  const RunnerSpec* spec = nullptr;
  RunnerPlace place = RunnerPlace::kHost;

  bool operator==(const ComposedLayer&) const = default;
};

// What a layer's functions read: the call, the located runners and the whole composition (an
// outer runner's arguments depend on what runs inside it).
struct LayerContext {
  const Selection& selection;
  const Runners& runners;
  const SandboxPolicy& policy;
  const RunNeeds& needs;
  const FsPlan& plan;
  std::span<const std::string> writable_roots;  // Seatbelt's: canonical, workspace first
  std::string_view temp_dir;
  std::span<const ComposedLayer> layers;  // outermost first
  bool root = false;                      // the caller is root (only refusals read it)

  bool has(RunnerLayer layer) const;
};

struct RunnerSpec {
  RunnerLayer layer = RunnerLayer::kBwrap;
  // Who it is in messages: "the bwrap runner /usr/bin/bwrap lies in ...".
  std::string_view role;
  // The chain backend it heads, when the platform's chain names it.
  std::optional<SandboxBackend> backend;
  // A confinement layer: named in the backend label; the outermost one's dialect and verdict are
  // the wrap's. The network proxy and bwrap's exec shim confine nothing themselves.
  bool confines = true;
  RunnerSource source = RunnerSource::kShipped;
  // kShipped: its file name in bin/, beside dsh-sandbox (the install list, dsh-programs.txt).
  std::string_view installed_name;
  // How local::locate_runners finds it, one line.
  std::string_view located_by;
  RunnerProbe probe = RunnerProbe::kBackend;

  // The words that start it, as located (windows-acl and runnerCommand: a prefix); empty: none
  // configured. Its first word is the file the trust check opens.
  std::vector<std::string> (*program)(const Runners&) = nullptr;
  // Its words between the program and "--" at `place`: run flags, then its profile.
  std::vector<std::string> (*args)(const LayerContext&, RunnerPlace) = nullptr;
  // The status channel `args` names at `place` when status channels are wanted; nullopt: none.
  std::optional<StatusChannel> (*status_channel)(RunnerPlace) = nullptr;
  // How a consumer recognises this runner failing before the command ran (in band).
  RunnerFailureRule (*failure_rule)(const Runners&) = nullptr;
  // Appends what it leaves ungoverned of the mode's promise, and what it refuses, at `place`.
  void (*limits)(const LayerContext&, RunnerPlace, ConfinedArgv&) = nullptr;
  // Why it cannot honour this call at `place`, or nullopt: the provider refuses the call.
  std::optional<std::string> (*refusal)(const LayerContext&, RunnerPlace) = nullptr;

  // Confinement layers only (nullptr otherwise): the stderr dialect of its denials, the
  // contract's verdict, and whether a command under it can write `path` on the host (compared
  // as spelled).
  std::vector<std::string> (*denial_signatures)() = nullptr;
  SandboxEnforcement (*enforcement)(const LayerContext&) = nullptr;
  bool (*host_writable)(std::string_view path, const SandboxPolicy& policy) = nullptr;
};

// The first word of spec.program(runners), or empty when none is configured.
std::string program_path(const RunnerSpec& spec, const Runners& runners);

// The registration table: every runner, each once.
std::span<const RunnerSpec* const> runner_specs();
// The spec of `layer`, or of the runner that heads `backend`; std::logic_error for neither.
const RunnerSpec& runner_spec(RunnerLayer layer);
const RunnerSpec& backend_spec(SandboxBackend backend);

// Each runner's own spec, defined in its home.
const RunnerSpec& bwrap_spec();
const RunnerSpec& seccomp_exec_spec();
const RunnerSpec& landlock_run_spec();
const RunnerSpec& netproxy_spec();
const RunnerSpec& runner_command_spec();
const RunnerSpec& seatbelt_spec();
const RunnerSpec& windows_acl_spec();

// Shared spec parts: no channel, nothing ungoverned or refused, no refusal.
std::optional<StatusChannel> no_status_channel(RunnerPlace place);
void no_limits(const LayerContext& context, RunnerPlace place, ConfinedArgv& facts);
std::optional<std::string> no_refusal(const LayerContext& context, RunnerPlace place);

}  // namespace dsh::sandbox::profiles
