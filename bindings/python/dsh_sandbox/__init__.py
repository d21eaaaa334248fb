"""dsh-sandbox from Python: confine(argv, ...) returns the argv to spawn instead (a dict with
the reference's field names: argv, enforcement, denialSignatures, runnerFailureRules, plus
backend, layers, ungoverned, ...); run(argv, ...) runs it confined and returns the outcome (the
`dsh-sandbox run --json` object, docs/schema/run.schema.json, plus exitStatus). Both call the
dsh-sandbox CLI, found on PATH unless `binary` names it. Standard library only."""
import json
import subprocess

__all__ = ["SandboxError", "SandboxUnavailableError", "confine", "run"]

_UNAVAILABLE_PREFIX = 'sandbox mode "'


class SandboxError(Exception):
    """The call was refused; nothing ran. `code` is SANDBOX_INVALID_INPUT, USAGE or
    SANDBOX_UNAVAILABLE."""

    def __init__(self, message, code="SANDBOX_INVALID_INPUT", result=None):
        super().__init__(message)
        self.code = code
        self.result = result


class SandboxUnavailableError(SandboxError):
    """No backend can confine the command here (or its runner failed): it did not run."""

    def __init__(self, message, result=None):
        super().__init__(message, "SANDBOX_UNAVAILABLE", result)


def _error(message, code, result=None):
    if code == "SANDBOX_UNAVAILABLE":
        return SandboxUnavailableError(message, result)
    return SandboxError(message, code, result)


def _error_from_stderr(stderr, result=None):
    lines = [line for line in stderr.splitlines() if line.startswith("dsh-sandbox: ")]
    message = lines[-1][len("dsh-sandbox: "):] if lines else stderr.strip()
    code = "SANDBOX_UNAVAILABLE" if message.startswith(_UNAVAILABLE_PREFIX) else "SANDBOX_INVALID_INPUT"
    return _error(message, code, result)


def _policy_args(mode, workspace_root, network, config):
    args = []
    if mode:
        args += ["--mode", mode]
    if workspace_root:
        args += ["--workspace", str(workspace_root)]
    if network:
        args += ["--network", network]
    if config:
        args += ["--config", str(config)]
    return args


def _not_found(binary):
    return SandboxUnavailableError(
        f"dsh-sandbox not found ({binary}): install it, or pass binary='/path/to/dsh-sandbox'")


def confine(argv, mode="read-only", workspace_root=None, network=None, config=None,
            binary="dsh-sandbox"):
    """The confined argv for `argv` under `mode` ("read-only" or "workspace-write"), as a dict
    with the reference's field names. `network` is "deny" (the default when None: no network),
    "inherit" or "allow:NAME,..." (docs/network.md). Runs nothing. Raises SandboxError on bad
    input and SandboxUnavailableError when nothing can confine it here."""
    if not argv or isinstance(argv, str):
        raise SandboxError("confine: argv must be a non-empty list of strings")
    args = [binary, "confine", *_policy_args(mode, workspace_root, network, config), "--", *argv]
    try:
        done = subprocess.run(args, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise _not_found(binary) from None
    if done.returncode != 0:
        raise _error_from_stderr(done.stderr)
    return json.loads(done.stdout)


def run(argv, mode="read-only", workspace_root=None, network=None, timeout=None, env=None,
        unset_env=None, cwd=None, on_stdout=None, on_stderr=None, config=None,
        binary="dsh-sandbox"):
    """Runs `argv` confined and returns the outcome dict (exitCode, signal, timedOut, denied,
    stdout, stderr, backend, enforcement, ... and exitStatus, the status dsh-sandbox exited
    with). A nonzero exit is an outcome, not an error. `network`: None or "deny" (the default of
    confined modes: no network), "inherit", or "allow:NAME,..."; danger-full-access keeps the
    caller's network. `timeout` is in seconds (at most 600);
    `env` names variables to pass through the scrub, `unset_env` names to remove; on_stdout and
    on_stderr receive the output live, chunk by chunk. Raises SandboxError for bad input and
    SandboxUnavailableError when the command could not be confined (it did not run)."""
    if not argv or isinstance(argv, str):
        raise SandboxError("run: argv must be a non-empty list of strings")
    args = [binary, "run", "--json-lines", *_policy_args(mode, workspace_root, network, config)]
    if timeout is not None:
        args += ["--timeout", str(timeout)]
    for name in env or ():
        args += ["--env", name]
    for name in unset_env or ():
        args += ["--unset-env", name]
    args += ["--", *argv]
    try:
        child = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, errors="replace")
    except FileNotFoundError:
        raise _not_found(binary) from None
    result = None
    failure = None
    with child:
        for line in child.stdout:
            event = json.loads(line)
            if "error" in event:
                failure = _error(event["error"]["message"], event["error"]["code"])
            elif event.get("type") == "stdout" and on_stdout:
                on_stdout(event["data"])
            elif event.get("type") == "stderr" and on_stderr:
                on_stderr(event["data"])
            elif event.get("type") == "exit":
                result = event
        stderr = child.stderr.read()
    status = child.wait()
    if failure is not None:
        raise failure
    if result is None:
        raise _error_from_stderr(stderr or f"dsh-sandbox exited {status} without a result")
    del result["type"]
    result["exitStatus"] = status
    if result["runnerFailed"]:
        raise _error_from_stderr(stderr, result)
    return result
