// SPDX-License-Identifier: Apache-2.0
// Terminal and shared-memory programs inside a run: under bwrap (with or without the Landlock
// layer) `script`, `tmux`, Python's pty.openpty() and multiprocessing work in both modes, on the
// run's private devpts and /dev/shm; on the Landlock backend, whose /dev is the host's, they are
// refused and the host's /dev/shm gains nothing.
#include <unistd.h>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

constexpr ConfinedSandboxMode kModes[] = {ConfinedSandboxMode::kReadOnly,
                                          ConfinedSandboxMode::kWorkspaceWrite};
constexpr const char* kPython = "/usr/bin/python3";

const char* const kOpenpty =
    "import os, pty\n"
    "m, s = pty.openpty()\n"
    "os.write(s, b'through-the-pty\\n')\n"
    "print(os.read(m, 64).decode().strip(), os.ttyname(s).startswith('/dev/pts/'))\n";

// Pool, lock and an anonymous segment, as applications use them; then a segment and a semaphore
// under names the test chooses (argv[1]), left in place so the test can look for them on the
// host: on a private /dev/shm they vanish with the run.
const char* const kMultiprocessing =
    "import sys, _multiprocessing, multiprocessing as mp\n"
    "from multiprocessing import resource_tracker, shared_memory\n"
    "def square(x):\n"
    "    return x * x\n"
    "if __name__ == '__main__':\n"
    "    with mp.Pool(2) as pool:\n"
    "        print(pool.map(square, [1, 2, 3]))\n"
    "    lock = mp.Lock()\n"
    "    with lock:\n"
    "        print('lock')\n"
    "    shm = shared_memory.SharedMemory(create=True, size=16)\n"
    "    shm.close()\n"
    "    shm.unlink()\n"
    "    print('shm')\n"
    "    kept = shared_memory.SharedMemory(name=sys.argv[1], create=True, size=16)\n"
    "    resource_tracker.unregister(kept._name, 'shared_memory')\n"
    "    sem = _multiprocessing.SemLock(1, 1, 1, '/' + sys.argv[1], False)\n"
    "    print('kept')\n";

bool on_host_dev_shm(const std::string& name) {
  return ::access(("/dev/shm/" + name).c_str(), F_OK) == 0;
}

class Terminals : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    for (const char* program : {kPython, "/usr/bin/script", "/usr/bin/tmux"}) {
      if (::access(program, X_OK) != 0) {
        DSH_SKIP_OR_FAIL(std::string(program) + " is missing (scripts/lib.sh installs it)");
      }
    }
    workspace_ = base_.mkdir("workspace");
  }
  bool has_private_dev() const { return GetParam() != Backend::kLandlock; }

  RunResult Run(ConfinedSandboxMode mode, const std::vector<std::string>& argv) {
    const ConfinedArgv confined = confine(*provider_, argv, mode, workspace_);
    EXPECT_EQ(confined.backend, expected_backend_name(GetParam()));
    return spawn(confined);
  }

  std::unique_ptr<sandbox::LocalSandboxProvider> provider_ = make_provider(GetParam());
  TempDir base_;
  std::string workspace_;
};

TEST_P(Terminals, PythonOpenptyWorksOnAPrivateDevpts) {
  for (const ConfinedSandboxMode mode : kModes) {
    const RunResult result = Run(mode, {kPython, "-c", kOpenpty});
    if (has_private_dev()) {
      EXPECT_TRUE(result.exited_with(0)) << result.describe();
      EXPECT_EQ(result.out, "through-the-pty True\n") << result.describe();
    } else {
      EXPECT_FALSE(result.exited_with(0)) << result.describe();
      EXPECT_NE(result.err.find("out of pty devices"), std::string::npos) << result.describe();
    }
  }
}

TEST_P(Terminals, ScriptRunsItsCommandOnAPty) {
  for (const ConfinedSandboxMode mode : kModes) {
    const RunResult result =
        Run(mode, {"/usr/bin/script", "-q", "-e", "-c", "tty; echo inside", "/dev/null"});
    if (has_private_dev()) {
      EXPECT_TRUE(result.exited_with(0)) << result.describe();
      EXPECT_NE(result.out.find("/dev/pts/"), std::string::npos) << result.describe();
      EXPECT_NE(result.out.find("inside"), std::string::npos) << result.describe();
    } else {
      EXPECT_FALSE(result.exited_with(0)) << result.describe();
      EXPECT_NE(lower(result.err).find("permission denied"), std::string::npos)
          << result.describe();
    }
  }
}

TEST_P(Terminals, TmuxStartsAServerAndASession) {
  for (const ConfinedSandboxMode mode : kModes) {
    // read-only leaves no writable /tmp, so the socket goes to the run's private /dev/shm. tmux
    // runs a session's command with $SHELL, else the account's login shell, which for nobody is
    // nologin: name a real shell so the session does not end before it is listed.
    const std::string socket_dir = mode == ConfinedSandboxMode::kReadOnly ? "/dev/shm" : "/tmp";
    const RunResult result =
        Run(mode, bash("unset TMUX; export SHELL=/bin/sh TMUX_TMPDIR=" + socket_dir +
                       "; tmux -f /dev/null new-session -d -s dsh 'sleep 30' && "
                       "tmux list-sessions -F '#{session_name}' && tmux kill-server"));
    if (has_private_dev()) {
      EXPECT_TRUE(result.exited_with(0)) << result.describe();
      EXPECT_EQ(result.out, "dsh\n") << result.describe();
    } else {
      EXPECT_FALSE(result.exited_with(0)) << result.describe();
    }
  }
}

TEST_P(Terminals, MultiprocessingUsesAPrivateDevShm) {
  for (const ConfinedSandboxMode mode : kModes) {
    const std::string name = unique("dsh-it-shm");
    const RunResult result = Run(mode, {kPython, "-c", kMultiprocessing, name});
    if (has_private_dev()) {
      EXPECT_TRUE(result.exited_with(0)) << result.describe();
      EXPECT_EQ(result.out, "[1, 4, 9]\nlock\nshm\nkept\n") << result.describe();
    } else {
      EXPECT_FALSE(result.exited_with(0)) << result.describe();
      EXPECT_NE(lower(result.err).find("permission denied"), std::string::npos)
          << result.describe();
    }
    // What the command made under the test's names is not on the host's /dev/shm (glibc names a
    // semaphore sem.NAME there).
    for (const std::string& entry : {name, "sem." + name}) {
      EXPECT_FALSE(on_host_dev_shm(entry))
          << "/dev/shm/" << entry << " under " << sandbox::wire_name(mode);
      ::unlink(("/dev/shm/" + entry).c_str());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Terminals,
                         ::testing::Values(Backend::kNatural, Backend::kBwrapOnly,
                                           Backend::kLandlock),
                         param_label);

}  // namespace
}  // namespace dsh::local_it
