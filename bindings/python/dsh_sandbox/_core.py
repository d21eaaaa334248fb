"""What the blocking and the asyncio API share: the typed errors, the typed results, and the
command lines, built from the generated option table (_options.py, from man/cli.json)."""
from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ._options import OPTIONS

_UNAVAILABLE_PREFIX = 'sandbox mode "'
_PREFIX = "dsh-sandbox: "


class SandboxError(Exception):
    """The call was refused or ended abnormally. `code` is the CLI's error code; `result` the
    run's outcome when there was one (a runner failure, a cancelled run)."""

    def __init__(self, message, code="SANDBOX_INVALID_INPUT", result=None):
        super().__init__(message)
        self.code = code
        self.result = result


class SandboxInputError(SandboxError):
    """Bad input (a usage error, a value out of range, an option the command does not take):
    nothing ran."""

    def __init__(self, message, code="SANDBOX_INVALID_INPUT", result=None):
        super().__init__(message, code, result)


class SandboxUnavailableError(SandboxError):
    """No backend can confine the command here, its runner failed, or the CLI is missing: it
    did not run."""

    def __init__(self, message, result=None):
        super().__init__(message, "SANDBOX_UNAVAILABLE", result)


class SandboxCancelledError(SandboxError):
    """The run was cancelled (the cancel event, Ctrl-C): its whole command tree was ended."""

    def __init__(self, message="the run was cancelled; its whole command tree was ended",
                 result=None):
        super().__init__(message, "CANCELLED", result)


def error(message, code, result=None):
    if code == "SANDBOX_UNAVAILABLE":
        return SandboxUnavailableError(message, result)
    if code in ("SANDBOX_INVALID_INPUT", "USAGE"):
        return SandboxInputError(message, code, result)
    return SandboxError(message, code, result)


def error_from_stderr(stderr, result=None):
    lines = [line for line in stderr.splitlines() if line.startswith(_PREFIX)]
    message = lines[-1][len(_PREFIX):] if lines else stderr.strip()
    code = "SANDBOX_UNAVAILABLE" if message.startswith(_UNAVAILABLE_PREFIX) else "SANDBOX_INVALID_INPUT"
    return error(message, code, result)


def not_found(binary):
    return SandboxUnavailableError(
        f"dsh-sandbox not found ({binary}): install it, or pass binary='/path/to/dsh-sandbox'")


# ---- command lines -------------------------------------------------------------------------

def _network(value):
    if isinstance(value, dict) and "allow" in value:
        value = list(value["allow"])
    if isinstance(value, (list, tuple)):
        if not value or not all(isinstance(d, str) and d and "," not in d for d in value):
            raise SandboxInputError("network: the allow-list must name at least one destination, "
                                    "each a non-empty string without commas")
        return "allow:" + ",".join(value)
    if not isinstance(value, str):
        raise SandboxInputError("network: 'deny', 'inherit', 'allow:NAME,...', a list of "
                                "destinations or {'allow': [...]}")
    return value


def _scalar(command, name, value):
    if isinstance(value, bool) or not isinstance(value, (str, int, float, os.PathLike)):
        raise SandboxInputError(f"{command}: {name} must be a string or a number, "
                                f"not {type(value).__name__}")
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _unknown(command, name):
    takers = [c for c, table in OPTIONS.items() if name in table]
    if takers:
        return SandboxInputError(f"{command} does not take {name} ({', '.join(takers)} "
                                 f"{'does' if len(takers) == 1 else 'do'})")
    return SandboxInputError(f"{command}: unknown option {name}; known: "
                             f"{', '.join(OPTIONS[command])}")


def option_args(command, options):
    """The flags of `command` for the keyword arguments `options`; anything the table does not
    give `command` is refused before the CLI starts."""
    table = OPTIONS[command]
    args = []
    for name, value in options.items():
        if value is None:
            continue
        entry = table.get(name)
        if entry is None:
            raise _unknown(command, name)
        if entry["kind"] == "flag":
            if not isinstance(value, bool):
                raise SandboxInputError(f"{command}: {name} must be True or False")
            if value:
                args.append(entry["flag"])
        elif entry["kind"] == "repeatable":
            values = [value] if isinstance(value, (str, os.PathLike)) else value
            if not isinstance(values, (list, tuple)) or not all(
                    isinstance(v, (str, os.PathLike)) for v in values):
                raise SandboxInputError(f"{command}: {name} must be a list of strings")
            for v in values:
                args += [entry["flag"], os.fspath(v)]
        elif entry["type"] == "network":
            args += [entry["flag"], _network(value)]
        elif name == "cwd":
            # Python's meaning of cwd: relative to this process's directory (the CLI's --workdir
            # would take a relative one against the workspace root).
            args += [entry["flag"], os.path.abspath(_scalar(command, name, value))]
        else:
            args += [entry["flag"], _scalar(command, name, value)]
    return args


def check_argv(command, argv):
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(w, str) for w in argv):
        raise SandboxInputError(f"{command}: argv must be a non-empty list of strings")
    return list(argv)


def command_line(command, argv, binary, options, extra=()):
    argv = check_argv(command, argv)
    return [binary, command, *extra, *option_args(command, options), "--", *argv]


def spawn_cwd(options):
    """Where the CLI itself starts: the command's cwd when given, so an omitted workspace_root
    still defaults to it."""
    cwd = options.get("cwd")
    if cwd is None:
        return None
    cwd = os.path.abspath(os.fspath(cwd))
    # A missing one is bad input, never reported as a missing CLI.
    if not os.path.isdir(cwd):
        raise SandboxInputError(f"cwd {cwd!r} is not an existing directory; create it or pass another")
    return cwd


# ---- typed results -------------------------------------------------------------------------

def _camel(name):
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


class _Raw:
    """The CLI's object stays available: `result.raw`, and `result["exitCode"]` as before."""

    raw: Dict[str, Any]

    def __getitem__(self, key):
        return self.raw[key]

    def __contains__(self, key):
        return key in self.raw

    def get(self, key, default=None):
        return self.raw.get(key, default)

    @classmethod
    def from_raw(cls, raw):
        values = {}
        for item in dataclasses.fields(cls):
            if item.name == "raw":
                continue
            value = raw.get(_camel(item.name))
            convert = item.metadata.get("convert")
            values[item.name] = convert(value) if convert and value is not None else value
        return cls(raw=raw, **values)


def _convert(function):
    return field(default=None, metadata={"convert": function})


@dataclass
class Bound(_Raw):
    max: Optional[int] = None
    enforced_by: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Bounds(_Raw):
    processes: Optional[Bound] = _convert(Bound.from_raw)
    memory: Optional[Bound] = _convert(Bound.from_raw)
    tree_kill: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class EffectivePolicy(_Raw):
    """The policy a call ran under, defaults included."""
    mode: Optional[str] = None
    workspace_root: Optional[str] = None
    network: Optional[str] = None
    allow_write: Optional[List[str]] = None
    deny_write: Optional[List[str]] = None
    deny_read: Optional[List[str]] = None
    allow_cache: Optional[List[str]] = None
    protected: Optional[List[str]] = None
    network_allow: Optional[List[str]] = None
    network_deny: Optional[List[str]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Denial(_Raw):
    op: Optional[str] = None
    rule: Optional[str] = None
    path: Optional[str] = None
    pid: Optional[int] = None
    exe: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Truncated(_Raw):
    stdout: bool = False
    stderr: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class RunResult(_Raw):
    """The `dsh-sandbox run --json` object (docs/schema/run.schema.json), plus exit_status."""
    schema_version: Optional[int] = None
    mode: Optional[str] = None
    workspace_root: Optional[str] = None
    network: Optional[str] = None
    backend: Optional[str] = None
    enforcement: Optional[str] = None
    strict_enforcement: Optional[str] = None
    ungoverned: Optional[List[str]] = None
    exit_code: Optional[int] = None
    signal: Optional[str] = None
    timed_out: bool = False
    denied: bool = False
    runner_failed: bool = False
    not_started: Optional[str] = None
    stdout: str = ""
    stderr: str = ""
    truncated: Optional[Truncated] = _convert(Truncated.from_raw)
    duration_ms: Optional[int] = None
    interrupted: Optional[str] = None
    bounds: Optional[Bounds] = _convert(Bounds.from_raw)
    denial_source: Optional[str] = None
    denials: Optional[List[Denial]] = _convert(lambda items: [Denial.from_raw(d) for d in items])
    denial_count: Optional[int] = None
    policy: Optional[EffectivePolicy] = _convert(EffectivePolicy.from_raw)
    exit_status: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class RunnerFailureRule(_Raw):
    fatal_signatures: Optional[List[str]] = None
    informational_lines: Optional[List[str]] = None
    allowed_exit_codes: Optional[List[int]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class ConfinedArgv(_Raw):
    """What confine prints: the argv to spawn instead, with the reference's field names."""
    argv: Optional[List[str]] = None
    enforcement: Optional[str] = None
    denial_signatures: Optional[List[str]] = None
    runner_failure_rules: Optional[List[RunnerFailureRule]] = _convert(
        lambda items: [RunnerFailureRule.from_raw(r) for r in items])
    backend: Optional[str] = None
    layers: Optional[List[str]] = None
    ungoverned: Optional[List[str]] = None
    strict_enforcement: Optional[str] = None
    refused: Optional[List[str]] = None
    network: Optional[str] = None
    provided_fds: Optional[List[Any]] = None
    status_channels: Optional[List[Dict[str, Any]]] = None
    policy: Optional[EffectivePolicy] = _convert(EffectivePolicy.from_raw)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class JobStatus(_Raw):
    """A background job's state and output (`dsh-sandbox job-output --json`)."""
    handle: Optional[str] = None
    state: Optional[str] = None  # running, completed, killed
    mode: Optional[str] = None
    exit_code: Optional[int] = None
    signal: Optional[str] = None
    timed_out: bool = False
    runner_failed: bool = False
    runner_exit_code: Optional[int] = None
    spawn_failed: Optional[str] = None
    denied: bool = False
    denial: Optional[str] = None
    stdout: str = ""
    stderr: str = ""
    lossy: bool = False
    full_output: Optional[List[str]] = None
    git_state: Optional[List[str]] = None
    # Why the job's session ended it (its mode narrowed below the job's, or its log unreadable).
    ended_by_session: Optional[str] = None
    exit_status: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class JobListEntry(_Raw):
    """One job of `dsh-sandbox job-list --json`."""
    handle: Optional[str] = None
    state: Optional[str] = None
    argv: Optional[List[str]] = None
    mode: Optional[str] = None
    workspace: Optional[str] = None
    session: Optional[str] = None
    started_at: Optional[int] = None
    exit_code: Optional[int] = None
    exit_status: Optional[int] = None
    signal: Optional[str] = None
    timed_out: bool = False
    denied: bool = False
    denial: Optional[str] = None
    runner_failed: bool = False
    runner_exit_code: Optional[int] = None
    spawn_failed: Optional[str] = None
    ended_by_session: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


# ---- reading the CLI's answers -------------------------------------------------------------

class LineReader:
    """Folds `run --json-lines` into the outcome, calling the live callbacks."""

    def __init__(self, on_stdout, on_stderr):
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.result = None
        self.failure = None

    def feed(self, line):
        try:
            event = json.loads(line)
        except ValueError:
            return None
        if "error" in event:
            self.failure = error(event["error"]["message"], event["error"]["code"])
        elif event.get("type") == "stdout" and self.on_stdout:
            return self.on_stdout(event["data"])
        elif event.get("type") == "stderr" and self.on_stderr:
            return self.on_stderr(event["data"])
        elif event.get("type") == "exit":
            self.result = event
        return None

    def outcome(self, status, stderr, cancelled):
        """The RunResult, or raises the typed error."""
        result = None
        if self.result is not None:
            raw = dict(self.result)
            del raw["type"]
            raw["exitStatus"] = status
            result = RunResult.from_raw(raw)
        if cancelled:
            raise SandboxCancelledError(result=result)
        if self.failure is not None:
            raise self.failure
        if result is None:
            raise error_from_stderr(stderr or f"dsh-sandbox exited {status} without a result")
        if result.runner_failed:
            raise error_from_stderr(stderr, result)
        return result


def json_answer(stdout, stderr, what):
    """One JSON object a job-* call printed, whatever its exit status (job-output exits 75 while
    the job runs); the error object or the stderr line as a typed error."""
    try:
        value = json.loads(stdout)
    except ValueError:
        value = None
    if isinstance(value, dict) and "error" in value:
        raise error(value["error"]["message"], value["error"]["code"])
    if value is None:
        raise error_from_stderr(stderr or f"dsh-sandbox {what} printed nothing")
    return value


def job_wait_args(handle, timeout):
    args = ["job-wait", "--json"]
    if timeout is not None:
        args += ["--timeout", _scalar("wait", "timeout", timeout)]
    return args + [handle]
