// SPDX-License-Identifier: Apache-2.0
// The runner specs: each registered runner is complete (located, trusted, probed, installed,
// with a failure rule), the shipped ones are exactly the programs the install puts beside
// dsh-sandbox, and `layers` names exactly the programs of a composed argv, in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {
namespace {

using Argv = std::vector<std::string>;

const SandboxPolicy kRo{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt,
                        NetworkPolicy::kInherit};
const Argv kCommand = {"bash", "-c", "echo hi"};
const LandlockFeatures kAbi7{SandboxEnforcement::kFull, 7, true, true, true};

Runners located() {
  Runners runners{"/usr/bin/bwrap",        "/opt/dsh/landlock-run",
                  "/usr/bin/sandbox-exec", {"/usr/bin/node", "/opt/dsh/windows-acl-runner.js"},
                  "/opt/dsh/dsh-netproxy", "/opt/dsh/dsh-seccomp-exec"};
  runners.operator_runner = {{"/opt/site/runner", "--quiet"}, {"site-runner: "}, false};
  return runners;
}

SandboxPolicy allow_list(SandboxPolicy policy) {
  policy.network = NetworkPolicy::kAllowList;
  policy.network_allow.allow = {"example.com"};
  return policy;
}

// The layer each located runner's path starts.
std::map<std::string, RunnerLayer> layer_of_path(const Runners& runners) {
  std::map<std::string, RunnerLayer> layers;
  for (const RunnerSpec* spec : runner_specs()) {
    const std::string path = program_path(*spec, runners);
    if (!path.empty()) layers.emplace(path, spec->layer);
  }
  return layers;
}

// The programs an argv starts, outermost first, read back from the argv alone: its first word,
// then the word after each "--" while that word is a located runner (the caller's command is
// not). No profile argument of these policies is a bare "--".
std::vector<RunnerLayer> programs_of(const Argv& argv, const Runners& runners) {
  const std::map<std::string, RunnerLayer> known = layer_of_path(runners);
  std::vector<RunnerLayer> programs;
  auto word = argv.begin();
  while (word != argv.end()) {
    const auto runner = known.find(*word);
    if (runner == known.end()) break;
    programs.push_back(runner->second);
    word = std::find(word, argv.end(), std::string("--"));
    if (word != argv.end()) ++word;
  }
  EXPECT_EQ(Argv(word, argv.end()), kCommand) << "the command follows the last runner";
  return programs;
}

TEST(RunnerSpecs, EachRunnerIsRegisteredOnceAndFoundByItsLayer) {
  std::set<RunnerLayer> layers;
  for (const RunnerSpec* spec : runner_specs()) {
    EXPECT_TRUE(layers.insert(spec->layer).second) << layer_name(spec->layer);
    EXPECT_EQ(&runner_spec(spec->layer), spec);
    if (spec->backend) {
      EXPECT_EQ(&backend_spec(*spec->backend), spec);
    }
  }
  EXPECT_EQ(layers.size(), 7U);
  for (const SandboxBackend backend : {SandboxBackend::kBwrap, SandboxBackend::kLandlock,
                                       SandboxBackend::kSeatbelt, SandboxBackend::kWindowsAcl}) {
    EXPECT_EQ(backend_spec(backend).backend, backend);
  }
}

// Located, trusted (a role for its messages and a file to check), probed, installed, with a
// failure rule; a confinement layer also has its denial dialect, verdict and writable view.
TEST(RunnerSpecs, EachSpecIsComplete) {
  const Runners runners = located();
  for (const RunnerSpec* spec : runner_specs()) {
    SCOPED_TRACE(std::string(layer_name(spec->layer)));
    ASSERT_NE(spec->program, nullptr);
    ASSERT_NE(spec->args, nullptr);
    ASSERT_NE(spec->status_channel, nullptr);
    ASSERT_NE(spec->failure_rule, nullptr);
    ASSERT_NE(spec->limits, nullptr);
    ASSERT_NE(spec->refusal, nullptr);
    EXPECT_FALSE(spec->role.empty());
    EXPECT_FALSE(spec->located_by.empty());
    const std::string path = program_path(*spec, runners);
    EXPECT_TRUE(path.starts_with('/')) << "the trust check opens an absolute path: " << path;
    const RunnerFailureRule rule = spec->failure_rule(runners);
    EXPECT_FALSE(rule.fatal_signatures.empty());
    EXPECT_EQ(spec->source == RunnerSource::kShipped, !spec->installed_name.empty());
    if (spec->source == RunnerSource::kShipped) {
      EXPECT_TRUE(path.ends_with("/" + std::string(spec->installed_name))) << path;
    }
    EXPECT_EQ(spec->probe == RunnerProbe::kBackend, spec->backend.has_value());
    EXPECT_EQ(spec->confines, spec->denial_signatures != nullptr);
    EXPECT_EQ(spec->confines, spec->enforcement != nullptr);
    EXPECT_EQ(spec->confines, spec->host_writable != nullptr);
    if (spec->confines) {
      EXPECT_FALSE(spec->denial_signatures().empty());
    }
  }
}

// The install list is the one CMake generates from every dsh_program (dsh-programs.txt, which
// `cmake --install` and the .deb take): each shipped runner is in it, and every installed
// program but the CLI itself is a shipped runner.
TEST(RunnerSpecs, TheShippedRunnersAreExactlyTheInstalledProgramsBesideTheCli) {
  std::ifstream list(DSH_PROGRAMS_LIST);
  ASSERT_TRUE(list) << DSH_PROGRAMS_LIST;
  std::set<std::string> installed;
  for (std::string line; std::getline(list, line);) {
    if (!line.empty() && line != "dsh-sandbox") installed.insert(line);
  }
  std::set<std::string> shipped;
  for (const RunnerSpec* spec : runner_specs()) {
    if (spec->source == RunnerSource::kShipped) shipped.emplace(spec->installed_name);
  }
  EXPECT_EQ(shipped, installed);
  EXPECT_TRUE(shipped.contains("dsh-netproxy"));
}

// `layers` names exactly the programs the argv starts, in order: the allow-list's proxy and its
// bridge included, bwrap alone's exec shim included. The backend label stays the wire's.
TEST(ComposedLayers, LayersNameEveryProgramOfTheArgvInOrder) {
  const Runners runners = located();
  struct Case {
    Selection selection;
    SandboxPolicy policy;
    std::vector<RunnerLayer> layers;
    std::string backend;
  };
  using L = RunnerLayer;
  const std::vector<Case> cases = {
      {{SandboxBackend::kBwrap, kAbi7}, kRo, {L::kBwrap, L::kLandlockRun}, "bwrap+landlock"},
      {{SandboxBackend::kBwrap, kAbi7},
       allow_list(kRo),
       {L::kNetProxy, L::kBwrap, L::kNetProxy, L::kLandlockRun},
       "bwrap+landlock"},
      {{SandboxBackend::kBwrap, std::nullopt},
       allow_list(kRo),
       {L::kNetProxy, L::kSeccompExec, L::kBwrap, L::kNetProxy},
       "bwrap"},
      {{SandboxBackend::kBwrap, std::nullopt}, kRo, {L::kSeccompExec, L::kBwrap}, "bwrap"},
      {{SandboxBackend::kLandlock, kAbi7}, kRo, {L::kLandlockRun}, "landlock"},
      {{SandboxBackend::kSeatbelt, std::nullopt}, kRo, {L::kSeatbelt}, "seatbelt"},
      {{SandboxBackend::kWindowsAcl, std::nullopt}, kRo, {L::kWindowsAcl}, "windows-acl"},
  };
  for (const Case& c : cases) {
    for (const bool channels : {false, true}) {
      const ConfinedArgv confined =
          wrap(c.selection, runners, kCommand, c.policy, {}, "/tmp/user", {"", channels});
      SCOPED_TRACE(confined.backend + (channels ? " with channels" : ""));
      EXPECT_EQ(confined.layers, c.layers);
      EXPECT_EQ(programs_of(confined.argv, runners), c.layers);
      EXPECT_EQ(selection_layers(c.selection, c.policy.network), c.layers);
      EXPECT_EQ(confined.backend, c.backend);
      // Every status channel belongs to a layer of the argv.
      for (const StatusChannel& channel : confined.status_channels) {
        EXPECT_NE(std::find(c.layers.begin(), c.layers.end(), channel.layer), c.layers.end());
      }
    }
  }
}

TEST(ComposedLayers, TheOperatorsRunnerIsItsOneLayer) {
  const Runners runners = located();
  const OperatorRunner& own = runners.operator_runner;
  const ConfinedArgv confined = wrap_runner_command(own.command, own.failure_signatures, kCommand,
                                                    kRo, own.accepts_hardening);
  EXPECT_EQ(confined.layers, std::vector<RunnerLayer>{RunnerLayer::kRunnerCommand});
  EXPECT_EQ(programs_of(confined.argv, runners), confined.layers);
  EXPECT_EQ(confined.runner_failure_rules,
            (std::vector<RunnerFailureRule>{{std::nullopt, {"site-runner: "}, std::nullopt}}));
}

// Each runner's failure rule once, outermost first: the proxy and its bridge are one program.
TEST(ComposedLayers, FailureRulesFollowTheLayersOncePerRunner) {
  const Runners runners = located();
  const ConfinedArgv confined =
      wrap({SandboxBackend::kBwrap, kAbi7}, runners, kCommand, allow_list(kRo), {}, "/tmp/user");
  EXPECT_EQ(confined.runner_failure_rules,
            (std::vector<RunnerFailureRule>{netproxy_failure_rule(), bwrap_failure_rule(),
                                            landlock_failure_rule()}));
  EXPECT_EQ(confined.denial_signatures, Argv{std::string(kBwrapDenial)});
}

}  // namespace
}  // namespace dsh::sandbox::profiles
