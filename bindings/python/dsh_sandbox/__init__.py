"""dsh-sandbox from Python, through the dsh-sandbox CLI (found on PATH unless `binary` names it).
Standard library only, Python 3.9 or later.

- confine(argv, **options) returns the argv to spawn instead (ConfinedArgv, the reference's
  field names in snake_case; `.raw` is the CLI's object).
- run(argv, **options) runs it confined and returns a RunResult (the `run --json` object;
  `result["exitCode"]` still reads the raw object). `on_stdout` / `on_stderr` get the output
  live; `cancel` (a threading.Event) ends the whole command tree when set.
- start(argv, **options) starts a background job and returns a Job (output(), wait(), kill());
  list_jobs() lists this user's jobs.
- dsh_sandbox.aio has the same calls for asyncio; cancelling the task ends the tree.

The options are the CLI's, as keyword arguments (the table in _options.py is generated from the
CLI's own, man/cli.json): mode, workspace_root, network ("deny", "inherit", "allow:NAME,...", a
list of destinations or {"allow": [...]}), network_deny, network_resolve, config, cwd,
allow_write, deny_write, deny_read, allow_cache, session, max_processes, max_memory, timeout,
env, unset_env, no_evidence. An option the command does not take raises SandboxInputError and
runs nothing."""
import subprocess
import threading

from ._core import (Bound, Bounds, ConfinedArgv, Denial, EffectivePolicy, JobListEntry,
                    JobStatus, LineReader, RunnerFailureRule, RunResult, SandboxCancelledError,
                    SandboxError, SandboxInputError, SandboxUnavailableError, Truncated,
                    command_line, error_from_stderr, job_wait_args, json_answer, not_found,
                    spawn_cwd)
from ._options import OPTIONS

__all__ = ["Bound", "Bounds", "ConfinedArgv", "Denial", "EffectivePolicy", "Job", "JobListEntry",
           "JobStatus", "OPTIONS", "RunResult", "RunnerFailureRule", "SandboxCancelledError",
           "SandboxError", "SandboxInputError", "SandboxUnavailableError", "Truncated", "confine",
           "kill_session", "list_jobs", "run", "start"]


def _call(binary, args, cwd=None):
    try:
        return subprocess.run([binary, *args], capture_output=True, text=True, errors="replace",
                              check=False, cwd=cwd, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise not_found(binary) from None


def confine(argv, *, binary="dsh-sandbox", **options):
    """The confined argv for `argv` (ConfinedArgv). Runs nothing. Raises SandboxInputError on
    bad input and SandboxUnavailableError when nothing can confine it here."""
    args = command_line("confine", argv, binary, options)
    done = _call(binary, args[1:], spawn_cwd(options))
    if done.returncode != 0:
        raise error_from_stderr(done.stderr)
    return ConfinedArgv.from_raw(json_answer(done.stdout, done.stderr, "confine"))


def _end_tree(child):
    """SIGTERM to `dsh-sandbox run`: it forwards it to the command's process group, ends the
    whole tree (SIGKILL after a grace) and still prints its exit line."""
    if child.poll() is None:
        child.terminate()


def _watch(cancel, finished, child):
    """Ends the tree once `cancel` is set, unless the run finished first."""
    while not finished.is_set():
        if cancel.wait(0.05):
            _end_tree(child)
            return


def run(argv, *, binary="dsh-sandbox", on_stdout=None, on_stderr=None, cancel=None, **options):
    """Runs `argv` confined and returns a RunResult. A nonzero exit is an outcome, not an error.
    `cancel`: a threading.Event; setting it ends the whole tree and raises
    SandboxCancelledError (on Ctrl-C the tree is ended too, then KeyboardInterrupt goes on). Raises
    SandboxInputError for bad input, SandboxUnavailableError when the command could not be
    confined (it did not run)."""
    # --die-with-parent: if this process dies, even by SIGKILL, the CLI ends the whole tree.
    args = command_line("run", argv, binary, options, extra=["--json-lines", "--die-with-parent"])
    if cancel is not None and cancel.is_set():
        raise SandboxCancelledError("the run was cancelled before it started; nothing ran")
    try:
        child = subprocess.Popen(args, cwd=spawn_cwd(options), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 errors="replace")
    except FileNotFoundError:
        raise not_found(binary) from None
    reader = LineReader(on_stdout, on_stderr)
    stderr_parts = []
    drain = threading.Thread(target=lambda: stderr_parts.append(child.stderr.read()), daemon=True)
    drain.start()
    finished = threading.Event()
    if cancel is not None:
        threading.Thread(target=_watch, args=(cancel, finished, child), daemon=True).start()
    # Not `with child`: its exit waits for the command before an error here could end the tree.
    try:
        for line in child.stdout:
            reader.feed(line)
        drain.join()
        status = child.wait()
    except BaseException:
        _end_tree(child)
        child.wait()
        raise
    finally:
        finished.set()
        child.stdout.close()
    cancelled = cancel is not None and cancel.is_set()
    return reader.outcome(status, "".join(stderr_parts), cancelled)


class Job:
    """A background job start() began: it outlives this process until it ends or is killed."""

    def __init__(self, handle, binary="dsh-sandbox"):
        self.handle = handle
        self.binary = binary

    def __repr__(self):
        return f"Job({self.handle!r})"

    def output(self):
        """Its output so far and its state (JobStatus; state "running" while it runs)."""
        done = _call(self.binary, ["job-output", "--json", self.handle])
        return JobStatus.from_raw(json_answer(done.stdout, done.stderr, "job-output"))

    def wait(self, timeout=None):
        """Until it ends, or `timeout` seconds pass (then its state is still "running")."""
        done = _call(self.binary, job_wait_args(self.handle, timeout))
        return JobStatus.from_raw(json_answer(done.stdout, done.stderr, "job-wait"))

    def kill(self):
        """Ends the job and its whole command tree."""
        done = _call(self.binary, ["job-kill", self.handle])
        if done.returncode != 0:
            raise error_from_stderr(done.stderr)


def start(argv, *, binary="dsh-sandbox", **options):
    """Starts `argv` confined as a background job (`dsh-sandbox start`); returns its Job."""
    args = command_line("start", argv, binary, options)
    done = _call(binary, args[1:], spawn_cwd(options))
    if done.returncode != 0:
        raise error_from_stderr(done.stderr)
    return Job(done.stdout.strip(), binary)


def list_jobs(*, binary="dsh-sandbox"):
    """This user's background jobs (JobListEntry each)."""
    done = _call(binary, ["job-list", "--json"])
    return [JobListEntry.from_raw(j) for j in json_answer(done.stdout, done.stderr, "job-list")["jobs"]]


def kill_session(session, *, binary="dsh-sandbox"):
    """Ends every job started with this session log, and their trees."""
    done = _call(binary, ["job-kill", "--session", str(session)])
    if done.returncode != 0:
        raise error_from_stderr(done.stderr)
