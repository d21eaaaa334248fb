"""dsh_sandbox.aio against the real CLI: the same calls as coroutines; cancelling the task of a
run ends the whole tree, checked from outside (the grandchild's pid gone from /proc, its marker
never written)."""
import asyncio
import os
import re
import time
import unittest

import dsh_sandbox
from dsh_sandbox import aio
from _support import WorkspaceCase, gone, host_pid, nonce, pids_with


async def until(what, check, seconds=20):
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


class AioTest(WorkspaceCase):
    def test_run_streams_with_a_coroutine_callback(self):
        chunks = []

        async def on_stdout(chunk):
            chunks.append(chunk)

        async def main():
            return await aio.run(["sh", "-c", "echo one; echo two >&2; exit 4"],
                                 workspace_root=self.workspace, cwd=self.workspace,
                                 on_stdout=on_stdout, on_stderr=chunks.append)
        result = asyncio.run(main())
        self.assertIsInstance(result, dsh_sandbox.RunResult)
        self.assertEqual((result.exit_code, result.stdout, result.stderr), (4, "one\n", "two\n"))
        self.assertEqual(sorted(chunks), ["one\n", "two\n"])

    def test_confine_and_errors(self):
        async def main():
            confined = await aio.confine(["ls"], mode="read-only", workspace_root=self.workspace)
            self.assertEqual(confined.argv[-1], "ls")
            with self.assertRaises(dsh_sandbox.SandboxInputError):
                await aio.run(["true"], workspace_root=self.workspace, timeout="366d")
            with self.assertRaises(dsh_sandbox.SandboxUnavailableError):
                await aio.run(["true"], workspace_root=self.workspace, binary="/nonexistent/x")
        asyncio.run(main())

    def test_cancelling_the_task_ends_the_whole_tree(self):
        token = f"2.{nonce()}"
        marker = os.path.join(self.workspace, "aio-cancel-marker")

        async def main():
            printed = []
            task = asyncio.ensure_future(aio.run(
                self.grandchild_script(token, marker), mode="workspace-write",
                workspace_root=self.workspace,
                on_stdout=lambda chunk: printed.extend(int(p) for p in re.findall(r"pid (\d+)", chunk))))
            pid = await until("the grandchild, seen from outside",
                              lambda: task.done() or (printed and host_pid(token, printed[0])))
            if task.done():
                task.result()  # the run ended on its own: its error is the failure to show
                self.fail("the run ended before it was cancelled")
            started = time.monotonic()
            task.cancel()
            with self.assertRaises(asyncio.CancelledError) as caught:
                await task
            self.assertEqual(caught.exception.dsh_result.interrupted, "SIGTERM")
            self.assertTrue(gone(pid, token))
            self.assertEqual(pids_with(token), [])
            # Past the grandchild's 2 s, with a margin: its marker is absent.
            await asyncio.sleep(max(0.0, started + 3 - time.monotonic()))
            self.assertFalse(os.path.exists(marker))
        asyncio.run(main())

    def test_a_callback_that_raises_ends_the_tree(self):
        # Had the call waited for the command instead, the marker would be there when it returned.
        token = f"2.{nonce()}"
        marker = os.path.join(self.workspace, "callback-marker")

        async def on_stdout(chunk):
            raise RuntimeError("the harness failed")

        async def main():
            with self.assertRaisesRegex(RuntimeError, "the harness failed"):
                await aio.run(["sh", "-c", f"echo first; sleep {token}; touch {marker}"],
                              mode="workspace-write", workspace_root=self.workspace,
                              on_stdout=on_stdout)
        asyncio.run(main())
        self.assertEqual(pids_with(token), [])
        self.assertFalse(os.path.exists(marker))

    def test_jobs(self):
        async def main():
            token = f"30.{nonce()}"
            job = await aio.start(["sh", "-c", f"echo job-started; sleep {token}"],
                                  workspace_root=self.workspace)
            await until("the job's output", lambda: self._has_output(job))
            pids = await until("the job's sleep, seen from outside", lambda: pids_with(token))
            self.assertEqual((await job.wait(timeout=1)).state, "running")
            self.assertIn(job.handle, [entry.handle for entry in await aio.list_jobs()])
            await job.kill()
            self.assertEqual((await job.output()).state, "killed")
            self.assertTrue(all(gone(pid, token) for pid in pids))
        asyncio.run(main())

    @staticmethod
    async def _has_output(job):
        return "job-started" in (await job.output()).stdout


if __name__ == "__main__":
    unittest.main()
