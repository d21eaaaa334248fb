// SPDX-License-Identifier: Apache-2.0
// Harness of the LocalSandboxProvider / dsh-sandbox integration suite. Confined argvs come from
// the real provider (library) or the real CLI, run for real with the test support's process helper,
// and every effect is judged from outside: the file on the host, the listener's queue,
// /proc/<pid>/status of the confined process.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/local_provider.h"
#include "files.h"
#include "harness.h"
#include "json.h"
#include "must_run.h"
#include "process.h"
#include "temp_dir.h"
#include "text.h"

namespace dsh::local_it {

using sandbox::ConfinedArgv;
using sandbox::ConfinedSandboxMode;
using sandbox::NetworkPolicy;
using testing::RunResult;

inline const char* dsh_sandbox() { return DSH_SANDBOX_PATH; }
inline const char* deny_namespaces() { return DENY_NAMESPACES_PATH; }
inline const char* kernel_objects_probe() { return KERNEL_OBJECTS_PATH; }
inline const char* seccomp_exec() { return SECCOMP_EXEC_PATH; }

// How the provider is made to choose: the host's natural chain (bwrap+landlock here), or with
// bwrap made unusable by a missing path, which leaves Landlock, or with the launcher missing,
// which leaves bwrap alone.
enum class Backend { kNatural, kLandlock, kBwrapOnly };
std::string backend_label(
    Backend backend);  // "bwrap", "landlock", "bwraponly": parameterized names
std::string expected_backend_name(Backend backend);  // ConfinedArgv::backend
std::string param_label(const ::testing::TestParamInfo<Backend>& info);

// A path no file will ever occupy: a missing bwrap.
std::string missing_bwrap_path();

using testing::is_root;
using testing::TempDir;
using testing::unique;

// A copy of ll_probe in `dir` (0755). Under workspace-write bwrap mounts a fresh tmpfs on /tmp,
// so a build tree under /tmp would hide the probe from the confined command.
std::string copy_of_probe(const TempDir& dir);
// A copy of `program` (0755) at `path`.
void copy_program(const std::string& program, const std::string& path);

// A provider over the real runners. The test binary does not sit beside landlock-run, so the
// launcher path is injected; kLandlock also points bwrap at a missing path.
std::unique_ptr<sandbox::LocalSandboxProvider> make_provider(
    Backend backend, std::shared_ptr<sandbox::VerdictStore> store = nullptr);

ConfinedArgv confine(sandbox::LocalSandboxProvider& provider, const std::vector<std::string>& argv,
                     ConfinedSandboxMode mode, const std::string& workspace,
                     NetworkPolicy network = NetworkPolicy::kInherit);

std::vector<std::string> bash(const std::string& script);

// Runs the confined argv (for real) to completion, with the descriptors it asks for (each a
// sealed memfd holding its content, as the consumer provides them).
RunResult spawn(const ConfinedArgv& confined);

// `dsh-sandbox ARGS...` (the CLI at DSH_SANDBOX_PATH unless `program` is given).
RunResult run_cli(const std::vector<std::string>& args,
                  const std::string& program = DSH_SANDBOX_PATH);
// The same under the deny_namespaces seccomp wrapper.
RunResult cli_without_namespaces(const std::vector<std::string>& args);

using testing::parse_json;

// The one stderr line of a failed CLI call: exactly one line, starting "dsh-sandbox: ".
void expect_one_cli_error_line(const RunResult& result);

std::string lower(std::string text);
using testing::split_lines;

// readlink(/proc/self/ns/pid) of the test itself.
std::string host_pid_namespace();

// Whether this host can run the suite: Landlock enforced and bwrap able to create its sandbox.
// Tests call DSH_SKIP_OR_FAIL with the returned reason when it is not empty.
std::string missing_host_feature();

// The suite's common fixture: the host check (a skip, or a failure under
// DSH_SANDBOX_TESTS_MUST_RUN=1, when the host cannot run the suite), and a private directory for
// configs and workspaces.
class LocalTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // A config file with `json`, under a unique name in dir_ (for the CLI's --config).
  std::string write_config(const std::string& json) const;
  TempDir dir_;
};

// The same, parameterized by the backend the provider is made to choose.
class LocalBackendTest : public LocalTest, public ::testing::WithParamInterface<Backend> {};

// A provider of one backend, a workspace and a sibling directory beside it (in dir_).
class ProviderTest : public LocalTest {
 protected:
  explicit ProviderTest(Backend backend) : provider_(make_provider(backend)) {}
  void SetUp() override;
  std::unique_ptr<sandbox::LocalSandboxProvider> provider_;
  std::string workspace_;
  std::string sibling_;
};

// The pid of the first descendant of `root` whose /proc/<pid>/comm is `comm`, or -1.
int find_descendant(int root, const std::string& comm);
using testing::status_field;  // a field of /proc/<pid>/status, read from outside

}  // namespace dsh::local_it
