// Confines `ls` and runs `echo` under read-only through the installed library; a write outside
// the workspace must be denied. Prints what it saw; exits nonzero when anything is off.
#include <cstdio>
#include <string>
#include <vector>

#include "dsh/sandbox/executor.h"
#include "dsh/sandbox/local_provider.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer WORKSPACE\n");
    return 2;
  }
  const std::string workspace = argv[1];
  dsh::sandbox::LocalSandboxHooks hooks;
  hooks.launcher_path = DSH_SANDBOX_LAUNCHER;
  dsh::sandbox::LocalSandboxProvider provider({}, hooks);

  dsh::sandbox::SandboxPolicy policy;
  policy.mode = dsh::sandbox::ConfinedSandboxMode::kReadOnly;
  policy.workspace_root = workspace;
  const std::vector<std::string> ls = {"ls"};
  const dsh::sandbox::ConfinedArgv confined = provider.confine(ls, policy);
  std::printf("confine: backend %s, %zu argv words\n", confined.backend.c_str(),
              confined.argv.size());

  dsh::sandbox::SandboxExecutor executor(provider);
  dsh::sandbox::RunRequest request;
  request.argv = {"bash", "-c", "echo hello from the sandbox"};
  request.workspace_root = workspace;
  const dsh::sandbox::RunResult hello = executor.run(request);
  std::printf("run: exit %d, stdout %s", hello.exit_status, hello.stdout_tail.c_str());

  request.mode = dsh::sandbox::SandboxMode::kWorkspaceWrite;
  request.argv = {"bash", "-c", "echo x > " + workspace + "/../outside.txt"};
  const dsh::sandbox::RunResult denied = executor.run(request);
  std::printf("write outside: exit %d, denied %d\n", denied.exit_status, denied.denied ? 1 : 0);
  const bool ok = hello.exit_status == 0 && hello.stdout_tail == "hello from the sandbox\n" &&
                  denied.denied && denied.exit_status != 0 && !confined.argv.empty();
  return ok ? 0 : 1;
}
