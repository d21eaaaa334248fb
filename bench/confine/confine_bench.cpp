// SPDX-License-Identifier: Apache-2.0
// confine() after the verdict is cached: the per-command cost a harness pays (target: 2 us for
// a three-word argv). The probe is injected, so only the wrap itself is measured.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "dsh/sandbox/local_provider.h"

namespace {

using dsh::sandbox::BackendReport;
using dsh::sandbox::ConfinedSandboxMode;
using dsh::sandbox::LocalSandboxHooks;
using dsh::sandbox::LocalSandboxProvider;
using dsh::sandbox::SandboxBackend;
using dsh::sandbox::SandboxPolicy;

LocalSandboxProvider provider_with(std::vector<SandboxBackend> usable) {
  LocalSandboxHooks hooks;
  hooks.platform = "linux";
  hooks.launcher_path = "/usr/lib/dsh-sandbox/landlock-run";
  hooks.probe = [usable](BackendReport& report) {
    report.usable = std::find(usable.begin(), usable.end(), report.backend) != usable.end();
    report.enforcement = dsh::sandbox::SandboxEnforcement::kFull;
    report.landlock_abi = 7;
    report.landlock_seccomp = true;
  };
  return LocalSandboxProvider({}, hooks);
}

void confine_loop(benchmark::State& state, std::vector<SandboxBackend> usable,
                  ConfinedSandboxMode mode) {
  LocalSandboxProvider provider = provider_with(std::move(usable));
  const std::string workspace = std::filesystem::temp_directory_path().string();
  const SandboxPolicy policy{mode, workspace, std::nullopt};
  const std::vector<std::string> argv = {"bash", "-c", "make test"};
  benchmark::DoNotOptimize(provider.confine(argv, policy));  // the probe, once
  for (auto _ : state) benchmark::DoNotOptimize(provider.confine(argv, policy));
}

void bm_confine_read_only_bwrap_landlock(benchmark::State& state) {
  confine_loop(state, {SandboxBackend::kBwrap, SandboxBackend::kLandlock},
               ConfinedSandboxMode::kReadOnly);
}
void bm_confine_workspace_write_bwrap_landlock(benchmark::State& state) {
  confine_loop(state, {SandboxBackend::kBwrap, SandboxBackend::kLandlock},
               ConfinedSandboxMode::kWorkspaceWrite);
}
void bm_confine_read_only_landlock(benchmark::State& state) {
  confine_loop(state, {SandboxBackend::kLandlock}, ConfinedSandboxMode::kReadOnly);
}
void bm_confine_workspace_write_landlock(benchmark::State& state) {
  confine_loop(state, {SandboxBackend::kLandlock}, ConfinedSandboxMode::kWorkspaceWrite);
}

}  // namespace

BENCHMARK(bm_confine_read_only_bwrap_landlock);
BENCHMARK(bm_confine_workspace_write_bwrap_landlock);
BENCHMARK(bm_confine_read_only_landlock);
BENCHMARK(bm_confine_workspace_write_landlock);
BENCHMARK_MAIN();
