"""A harness's view: confine an argv (spawn it yourself), run it with live output and a
deny-read rule, cancel a run from asyncio, start a background job.
Run: python3 examples/harness.py [WORKSPACE]"""
import asyncio
import os
import sys

import dsh_sandbox
from dsh_sandbox import aio


async def cancelled_run(workspace):
    """Cancelling the task ends the whole confined tree."""
    task = asyncio.ensure_future(aio.run(["sleep", "30"], workspace_root=workspace))
    await asyncio.sleep(0.5)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        print("cancelled: the sleep and everything it started are gone")


def main():
    workspace = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    try:
        confined = dsh_sandbox.confine(["bash", "-c", "ls"], mode="read-only",
                                       workspace_root=workspace)
        print(f"spawn instead: {confined.argv[0]} ... ({confined.backend}, "
              f"{confined.enforcement})")
        result = dsh_sandbox.run(["bash", "-c", "echo hello; touch ../outside"],
                                 mode="workspace-write", workspace_root=workspace, cwd=workspace,
                                 deny_read=["~/.ssh"], max_processes=256, timeout=60,
                                 on_stdout=lambda chunk: print(f"[live] {chunk}", end=""))
        print(f"exit {result.exit_code}, denied by the sandbox: {result.denied}")
        asyncio.run(cancelled_run(workspace))
        job = dsh_sandbox.start(["bash", "-c", "echo from the job"], workspace_root=workspace)
        done = job.wait(timeout=30)
        print(f"job {job.handle}: {done.state}, output {done.stdout!r}")
    except dsh_sandbox.SandboxUnavailableError as error:
        print(f"cannot confine here: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
