"""A harness's view: confine an argv (spawn it yourself), or run it with live output.
Run: python3 examples/harness.py [WORKSPACE]"""
import os
import sys

import dsh_sandbox


def main():
    workspace = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    try:
        confined = dsh_sandbox.confine(["bash", "-c", "ls"], mode="read-only",
                                       workspace_root=workspace)
        print(f"spawn instead: {confined['argv'][0]} ... ({confined['backend']}, "
              f"{confined['enforcement']})")
        result = dsh_sandbox.run(["bash", "-c", "echo hello; touch ../outside"],
                                 mode="workspace-write", workspace_root=workspace, cwd=workspace,
                                 on_stdout=lambda chunk: print(f"[live] {chunk}", end=""))
        print(f"exit {result['exitCode']}, denied by the sandbox: {result['denied']}")
    except dsh_sandbox.SandboxUnavailableError as error:
        print(f"cannot confine here: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
