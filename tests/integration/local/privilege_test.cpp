// SPDX-License-Identifier: Apache-2.0
// A root caller's confined command has no capabilities under either backend.
// The capability sets are read from outside, in /proc/<pid>/status of the confined process
// itself; the nobody leg checks that the same holds for an unprivileged caller.
#include <unistd.h>

#include <cstdio>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

constexpr char kNoCapabilities[] = "0000000000000000";

class Privileges : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    provider_ = make_provider(GetParam());
    probe_ = copy_of_probe(workspace_);
  }
  ConfinedArgv wrap(ConfinedSandboxMode mode, const std::vector<std::string>& argv) {
    ConfinedArgv confined = confine(*provider_, argv, mode, workspace_.path());
    EXPECT_EQ(confined.backend, expected_backend_name(GetParam()));
    return confined;
  }
  std::unique_ptr<sandbox::LocalSandboxProvider> provider_;
  TempDir workspace_;
  std::string probe_;
};

TEST_P(Privileges, ConfinedCommandHasNoCapabilitiesAndNoNewPrivs) {
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    llrt::Held held(wrap(mode, {probe_, "hold"}).argv);
    ASSERT_TRUE(held.ready()) << held.finish().describe();
    const bool direct =
        llrt::read_file("/proc/" + std::to_string(held.pid()) + "/comm") == "ll_probe\n";
    const int pid = direct ? held.pid() : find_descendant(held.pid(), "ll_probe");
    ASSERT_GT(pid, 0) << "the confined ll_probe is not among the descendants of " << held.pid();
    for (const char* set : {"CapEff", "CapPrm", "CapInh", "CapAmb"}) {
      EXPECT_EQ(status_field(pid, set), kNoCapabilities) << set << " of pid " << pid;
    }
    EXPECT_EQ(status_field(pid, "NoNewPrivs"), "1") << "pid " << pid;
    // The confined process runs as the caller (root stays uid 0, without its capabilities).
    EXPECT_EQ(status_field(pid, "Uid").substr(0, status_field(pid, "Uid").find('\t')), llrt::uid());
    const RunResult finished = held.finish();
    EXPECT_TRUE(finished.exited_with(0)) << finished.describe();
  }
}

TEST_P(Privileges, CannotRemountRootReadWriteNorWriteARootOwnedPath) {
  const std::string marker = "/var/lib/" + unique("dsh-test");
  if (is_root()) {
    // Control: unconfined, the caller can write there, so the denial below means something.
    llrt::write_file(marker, "control");
    ASSERT_EQ(std::remove(marker.c_str()), 0);
  }
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    const RunResult result = spawn(wrap(mode, bash("mount -o remount,rw /; echo mount=$?; "
                                                   "printf x > " +
                                                   marker + "; echo write=$?")));
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out.find("mount=0\n"), std::string::npos) << result.describe();
    EXPECT_NE(result.out.find("mount="), std::string::npos) << result.describe();
    EXPECT_EQ(result.out.find("write=0\n"), std::string::npos) << result.describe();
    EXPECT_FALSE(llrt::exists(marker)) << result.describe();
    std::remove(marker.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Privileges,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
