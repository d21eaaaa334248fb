"""dsh-sandbox for asyncio: the calls of dsh_sandbox, as coroutines over asyncio subprocesses.
Cancelling the task of `run` ends the whole command tree (SIGTERM to `dsh-sandbox run`, which
forwards it to the command's process group and kills the tree after a grace) before the
CancelledError goes on; the ended run's RunResult is its attribute `dsh_result` when the CLI
reported one.

    result = await dsh_sandbox.aio.run(["make", "test"], mode="workspace-write",
                                       workspace_root=ws, on_stdout=print)
    job = await dsh_sandbox.aio.start(["npm", "run", "dev"], workspace_root=ws)
    status = await job.wait(timeout=5)
"""
import asyncio
import inspect

from ._core import (ConfinedArgv, JobListEntry, JobStatus, LineReader, SandboxCancelledError,
                    command_line, error_from_stderr, job_wait_args, json_answer, not_found,
                    spawn_cwd)

__all__ = ["Job", "confine", "kill_session", "list_jobs", "run", "start"]

# A json-lines line holds one chunk of output, escaped: well below this.
_LINE_LIMIT = 64 * 1024 * 1024


async def _call(binary, args, cwd=None):
    try:
        child = await asyncio.create_subprocess_exec(
            binary, *args, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except FileNotFoundError:
        raise not_found(binary) from None
    try:
        out, err = await child.communicate()
    except asyncio.CancelledError:
        if child.returncode is None:
            child.terminate()
        await asyncio.shield(child.wait())
        raise
    return child.returncode, out.decode(errors="replace"), err.decode(errors="replace")


async def confine(argv, *, binary="dsh-sandbox", **options):
    """As dsh_sandbox.confine: the confined argv (ConfinedArgv); runs nothing."""
    args = command_line("confine", argv, binary, options)
    status, out, err = await _call(binary, args[1:], spawn_cwd(options))
    if status != 0:
        raise error_from_stderr(err)
    return ConfinedArgv.from_raw(json_answer(out, err, "confine"))


async def _feed(reader, stream):
    while True:
        line = await stream.readline()
        if not line:
            return
        handled = reader.feed(line.decode(errors="replace"))
        if inspect.isawaitable(handled):
            await handled


async def run(argv, *, binary="dsh-sandbox", on_stdout=None, on_stderr=None, **options):
    """As dsh_sandbox.run, awaited: a RunResult. `on_stdout` / `on_stderr` may be plain
    functions or coroutine functions. Cancelling the task ends the whole tree, then raises
    CancelledError (with the ended run's RunResult as `dsh_result`, when there was one)."""
    # --die-with-parent: if this process dies, even by SIGKILL, the CLI ends the whole tree.
    args = command_line("run", argv, binary, options, extra=["--json-lines", "--die-with-parent"])
    try:
        child = await asyncio.create_subprocess_exec(
            *args, cwd=spawn_cwd(options), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=_LINE_LIMIT)
    except FileNotFoundError:
        raise not_found(binary) from None
    reader = LineReader(on_stdout, on_stderr)
    stderr_task = asyncio.ensure_future(child.stderr.read())
    try:
        await _feed(reader, child.stdout)
        status = await child.wait()
    except asyncio.CancelledError as cancelled:
        stderr_task.cancel()
        await asyncio.shield(_end_tree(child, reader))
        try:
            reader.outcome(child.returncode, "", True)
        except SandboxCancelledError as error:
            cancelled.dsh_result = error.result
        raise
    except BaseException:
        # A callback raised: the run's tree ends before the error goes on.
        stderr_task.cancel()
        await asyncio.shield(_end_tree(child, None))
        raise
    return reader.outcome(status, (await stderr_task).decode(errors="replace"), False)


async def _end_tree(child, reader):
    """SIGTERM to `dsh-sandbox run`; it ends the tree and still prints its exit line, which
    `reader` takes (None: the rest is read and dropped)."""
    if child.returncode is None:
        child.terminate()
    if reader is not None:
        await _feed(reader, child.stdout)
    else:
        while await child.stdout.read(65536):
            pass
    await child.wait()


class Job:
    """A background job start() began: it outlives this process until it ends or is killed."""

    def __init__(self, handle, binary="dsh-sandbox"):
        self.handle = handle
        self.binary = binary

    def __repr__(self):
        return f"aio.Job({self.handle!r})"

    async def output(self):
        """Its output so far and its state (JobStatus)."""
        _, out, err = await _call(self.binary, ["job-output", "--json", self.handle])
        return JobStatus.from_raw(json_answer(out, err, "job-output"))

    async def wait(self, timeout=None):
        """Until it ends, or `timeout` seconds pass (then its state is still "running").
        Cancelling this ends the wait, not the job."""
        _, out, err = await _call(self.binary, job_wait_args(self.handle, timeout))
        return JobStatus.from_raw(json_answer(out, err, "job-wait"))

    async def kill(self):
        """Ends the job and its whole command tree."""
        status, _, err = await _call(self.binary, ["job-kill", self.handle])
        if status != 0:
            raise error_from_stderr(err)


async def start(argv, *, binary="dsh-sandbox", **options):
    """As dsh_sandbox.start: starts a background job and returns its Job."""
    args = command_line("start", argv, binary, options)
    status, out, err = await _call(binary, args[1:], spawn_cwd(options))
    if status != 0:
        raise error_from_stderr(err)
    return Job(out.strip(), binary)


async def list_jobs(*, binary="dsh-sandbox"):
    """This user's background jobs."""
    _, out, err = await _call(binary, ["job-list", "--json"])
    return [JobListEntry.from_raw(j) for j in json_answer(out, err, "job-list")["jobs"]]


async def kill_session(session, *, binary="dsh-sandbox"):
    """Ends every job started with this session log, and their trees."""
    status, _, err = await _call(binary, ["job-kill", "--session", str(session)])
    if status != 0:
        raise error_from_stderr(err)
