#!/usr/bin/python3
"""Runs the real dsh-sandbox in every form that prints JSON and validates each object against
docs/schema/. Usage: validate_json.py DSH_SANDBOX SCHEMA_DIR. Exits nonzero on the first
object that does not validate, or on an outcome that is not the one the case expects."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

BIN, SCHEMAS = sys.argv[1], sys.argv[2]
FAILURES = []


def schema(name):
    with open(os.path.join(SCHEMAS, name + ".schema.json"), encoding="utf-8") as handle:
        value = json.load(handle)
    jsonschema.Draft202012Validator.check_schema(value)
    return jsonschema.Draft202012Validator(value)


VALIDATORS = {name: schema(name) for name in ("run", "run-lines", "confine", "probe", "error")}


def call(args, cwd, env=None):
    return subprocess.run([BIN] + args, cwd=cwd, capture_output=True, text=True, timeout=60,
                          env=env, check=False)


def check(case, name, value, expect=None):
    errors = sorted(VALIDATORS[name].iter_errors(value), key=str)
    if errors:
        FAILURES.append(f"{case}: {errors[0].message} at {list(errors[0].absolute_path)}")
    for key, wanted in (expect or {}).items():
        if value.get(key) != wanted:
            FAILURES.append(f"{case}: {key} is {value.get(key)!r}, expected {wanted!r}")
    print(f"{'ok  ' if not errors else 'FAIL'} {case}")


def single(case, name, args, cwd, status, expect=None):
    result = call(args, cwd)
    if result.returncode != status:
        FAILURES.append(f"{case}: exit {result.returncode}, expected {status}: {result.stderr}")
    lines = result.stdout.splitlines()
    if len(lines) != 1:
        FAILURES.append(f"{case}: {len(lines)} stdout lines, expected one object: {result.stdout!r}")
        return None
    value = json.loads(lines[0])
    check(case, name, value, expect)
    return value


def main():
    base = tempfile.mkdtemp(prefix="dsh-schema-", dir="/var/tmp")
    try:
        workspace = os.path.join(base, "workspace")
        os.mkdir(workspace)
        ws = ["--workspace", workspace]
        single("run exit 0", "run", ["run", "--json", *ws, "--", "true"], workspace, 0,
               {"exitCode": 0, "denied": False, "runnerFailed": False})
        single("run exit 3", "run", ["run", "--json", *ws, "-c", "echo out; exit 3"], workspace, 3,
               {"exitCode": 3, "stdout": "out\n"})
        single("run denied", "run",
               ["run", "--json", "--mode", "workspace-write", *ws, "-c",
                f"echo x > {base}/outside.txt"], workspace, 1, {"denied": True})
        if os.path.exists(os.path.join(base, "outside.txt")):
            FAILURES.append("run denied: the file outside the workspace was written")
        # Confined, the runner starts and reports the missing program as a shell would (127);
        # unconfined, exec itself refuses it and notStarted says why.
        single("run program missing", "run",
               ["run", "--json", *ws, "--", "/nonexistent/program"], workspace, 127)
        value = single("run not started", "run",
                       ["run", "--json", "--mode", "danger-full-access", *ws, "--",
                        "/nonexistent/program"], workspace, 127)
        if value is not None and not value["notStarted"]:
            FAILURES.append("run not started: notStarted is empty")
        single("run timeout", "run", ["run", "--json", "--timeout", "0.3", *ws, "--", "sleep", "5"],
               workspace, 124, {"timedOut": True})
        single("run network deny", "run",
               ["run", "--json", "--network", "deny", *ws, "--", "true"], workspace, 0,
               {"network": "deny"})
        single("run danger-full-access", "run",
               ["run", "--json", "--mode", "danger-full-access", *ws, "--", "true"], workspace, 0,
               {"backend": None, "enforcement": None})
        single("run truncated", "run",
               ["run", "--json", *ws, "-c", "head -c 3000000 /dev/zero | tr '\\0' x"],
               workspace, 0, {"truncated": {"stdout": True, "stderr": False}})
        result = call(["run", "--json-lines", *ws, "-c", "echo a; echo b >&2; exit 4"], workspace)
        types = []
        for line in result.stdout.splitlines():
            event = json.loads(line)
            types.append(event.get("type"))
            check(f"run --json-lines {event.get('type')}", "run-lines", event)
        if types[0] != "started" or types[-1] != "exit" or result.returncode != 4:
            FAILURES.append(f"run --json-lines: events {types}, exit {result.returncode}")
        for mode in ("read-only", "workspace-write"):
            single(f"confine {mode}", "confine", ["confine", "--mode", mode, *ws, "--", "ls"],
                   workspace, 0)
        single("confine status channels", "confine",
               ["confine", "--status-channels", *ws, "--", "ls"], workspace, 0)
        single("probe", "probe", ["probe", "--json"], workspace, 0)
        # Each refused call runs nothing: the marker it would create stays absent.
        marker = os.path.join(workspace, "ran")
        touch = ["--", "touch", marker]
        for case, args in (
                ("error unknown flag", ["run", "--json", "--netwrok", "deny", *touch]),
                ("error timeout", ["run", "--json", "--timeout", "366d", *touch]),
                ("error mode", ["run", "--json", "--mode", "bogus", *touch]),
                ("error danger network", ["run", "--json", "--mode", "danger-full-access",
                                          "--network", "deny", *touch]),
                ("error json-lines", ["run", "--json-lines", "--env", "DSH_NOT_SET_X", *touch]),
                ("error probe config", ["probe", "--json", "--config", "/nonexistent.json"])):
            value = single(case, "error", args, workspace, 125)
            if os.path.exists(marker):
                FAILURES.append(f"{case}: the command ran")
            if value is not None and case == "error timeout" and "365d" not in value["error"]["message"]:
                FAILURES.append("error timeout: the message does not name the maximum")
            if value is not None and case == "error unknown flag" and "--network?" not in value["error"]["message"]:
                FAILURES.append("error unknown flag: no suggestion")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for failure in FAILURES:
        print("FAIL", failure, file=sys.stderr)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
