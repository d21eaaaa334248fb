"""Against the real CLI (dsh-sandbox on PATH: the packaging tests put an installed copy's bin/
first). Confinement is checked from outside: the file the command tried to write is not there,
the loopback server's own log says which requests arrived, an ended tree's processes are gone
from /proc."""
import os
import re
import subprocess
import sys
import threading
import time
import unittest

import dsh_sandbox
from _support import HERE, HttpServer, WorkspaceCase, gone, host_pid, nonce, pids_with, until


class ConfineTest(WorkspaceCase):
    def test_confine_reference_fields(self):
        confined = dsh_sandbox.confine(["ls", "-l"], mode="read-only",
                                       workspace_root=self.workspace)
        self.assertIsInstance(confined, dsh_sandbox.ConfinedArgv)
        self.assertEqual(confined.argv[-2:], ["ls", "-l"])
        self.assertEqual(confined["argv"], confined.argv)  # the raw object, as before
        self.assertIn(confined.enforcement, ("full", "partial"))
        self.assertIsInstance(confined.denial_signatures, list)
        for rule in confined.runner_failure_rules:
            self.assertIsInstance(rule.fatal_signatures, list)

    def test_confined_argv_cannot_write_outside_or_read_a_denied_path(self):
        target = os.path.join(self.base, "outside-confine.txt")
        confined = dsh_sandbox.confine(["bash", "-c", f"echo x > {target}"],
                                       mode="workspace-write", workspace_root=self.workspace)
        done = subprocess.run(confined.argv, cwd=self.workspace, capture_output=True, check=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertFalse(os.path.exists(target))
        secret = self._secret("confine-secret")
        confined = dsh_sandbox.confine(["cat", secret], workspace_root=self.workspace,
                                       deny_read=[secret])
        self.assertIn(secret, confined.policy.deny_read)
        done = subprocess.run(confined.argv, cwd=self.workspace, capture_output=True, check=False)
        self.assertNotIn(b"confine-secret", done.stdout)

    def _secret(self, text):
        path = os.path.join(self.base, text + ".txt")
        with open(path, "w", encoding="utf-8") as out:
            out.write(text + "\n")
        os.chmod(path, 0o644)
        return path


class RunTest(WorkspaceCase):
    def test_run_streams_live_and_returns_a_typed_result(self):
        # The command waits for a file the test makes only once it saw the first chunk: the chunk
        # arrived while the command still ran.
        go = os.path.join(self.workspace, "go")
        chunks = []

        def on_stdout(chunk):
            chunks.append(chunk)
            if "first" in chunk:
                open(go, "w", encoding="utf-8").close()

        result = dsh_sandbox.run(
            ["bash", "-c", f"echo first; until [ -e {go} ]; do sleep 0.05; done; echo second; exit 7"],
            workspace_root=self.workspace, on_stdout=on_stdout)
        self.assertIsInstance(result, dsh_sandbox.RunResult)
        self.assertEqual(result.exit_code, 7)
        self.assertEqual(result.exit_status, 7)
        self.assertEqual(result["exitCode"], 7)
        self.assertEqual(result.schema_version, 1)
        self.assertEqual("".join(chunks), "first\nsecond\n")
        self.assertGreaterEqual(len(chunks), 2)
        self.assertEqual(result.stdout, "first\nsecond\n")
        self.assertFalse(result.truncated.stdout)
        self.assertIsInstance(result.bounds.processes, dsh_sandbox.Bound)
        self.assertEqual(result.policy.workspace_root, self.workspace)

    def test_run_denial(self):
        target = os.path.join(self.base, "outside-run.txt")
        result = dsh_sandbox.run(["bash", "-c", f"echo x > {target}"], mode="workspace-write",
                                 workspace_root=self.workspace, cwd=self.workspace)
        self.assertTrue(result.denied)
        self.assertFalse(os.path.exists(target))

    def test_cwd_is_where_the_command_starts(self):
        sub = os.path.join(self.workspace, "sub")
        os.mkdir(sub)
        self.assertEqual(dsh_sandbox.run(["pwd"], workspace_root=self.workspace, cwd=sub).stdout,
                         sub + "\n")
        # Without workspace_root the CLI starts there too: the workspace defaults to it.
        self.assertEqual(dsh_sandbox.run(["pwd"], cwd=sub).workspace_root, sub)

    def test_deny_read_is_refused_and_reported(self):
        secret = ConfineTest._secret(self, "run-secret")
        self.assertEqual(dsh_sandbox.run(["cat", secret], workspace_root=self.workspace).stdout,
                         "run-secret\n")
        result = dsh_sandbox.run(["cat", secret], workspace_root=self.workspace,
                                 deny_read=[secret])
        self.assertNotEqual(result.exit_code, 0)
        self.assertNotIn("run-secret", result.stdout)
        self.assertIn(secret, result.policy.deny_read)

    def test_path_rules_bounds_and_session(self):
        extra = os.path.join(self.base, "extra")
        os.mkdir(extra)
        os.chmod(extra, 0o777)
        protected = os.path.join(self.workspace, "protected")
        os.mkdir(protected)
        session = os.path.join(self.base, "session.jsonl")
        result = dsh_sandbox.run(["sh", "-c", f"echo a > {extra}/a; echo b > {protected}/b"],
                                 mode="workspace-write", workspace_root=self.workspace,
                                 allow_write=[extra], deny_write=[protected], max_processes=1000,
                                 max_memory="256M", session=session)
        with open(os.path.join(extra, "a"), encoding="utf-8") as written:
            self.assertEqual(written.read(), "a\n")
        self.assertFalse(os.path.exists(os.path.join(protected, "b")))
        self.assertEqual(result.bounds.processes.max, 1000)
        self.assertEqual(result.bounds.memory.max, 256 * 1024 * 1024)
        with open(session, encoding="utf-8") as log:
            self.assertIn('"sh"', log.read())

    def test_what_a_confined_run_planted_decides_no_later_call(self):
        """A cross-run attack through this door: a symlink and a config one confined run planted
        in its workspace decide no later call, and nothing reaches the symlink's target."""
        target = os.path.join(self.base, "target")
        os.mkdir(target)
        os.chmod(target, 0o777)
        planted = dsh_sandbox.run(
            ["sh", "-c", f"ln -s {target} link && echo '{{\"mode\": \"workspace-write\"}}' > config.json"],
            mode="workspace-write", workspace_root=self.workspace, cwd=self.workspace)
        self.assertEqual(planted.exit_code, 0, planted.stderr)
        with self.assertRaises(dsh_sandbox.SandboxInputError) as through:
            dsh_sandbox.run(["sh", "-c", "echo planted > f"], mode="workspace-write",
                            workspace_root=os.path.join(self.workspace, "link"))
        self.assertIn("symlink", str(through.exception))
        with self.assertRaises(dsh_sandbox.SandboxInputError) as configured:
            dsh_sandbox.run(["sh", "-c", f"echo planted > {target}/g"], workspace_root=self.workspace,
                            config=os.path.join(self.workspace, "config.json"))
        self.assertIn("cannot be trusted", str(configured.exception))
        self.assertEqual(os.listdir(target), [])

    def test_allow_cache(self):
        home = os.path.join(self.base, "home")
        os.mkdir(home)
        saved = os.environ.get("HOME")
        os.environ["HOME"] = home
        try:
            result = dsh_sandbox.run(["touch", f"{home}/.npm/_cacache/written"],
                                     mode="workspace-write", workspace_root=self.workspace,
                                     allow_cache=["npm"])
        finally:
            os.environ["HOME"] = saved
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(result.policy.allow_cache, ["npm"])
        self.assertTrue(os.path.exists(f"{home}/.npm/_cacache/written"))

    def test_env_pass_and_unset(self):
        os.environ["DSH_PY_TEST_TOKEN"] = "kept"
        os.environ["PY_PLAIN_VAR"] = "dropped"
        try:
            result = dsh_sandbox.run(
                ["bash", "-c", 'echo "$DSH_PY_TEST_TOKEN/${PY_PLAIN_VAR:-none}"'],
                workspace_root=self.workspace, cwd=self.workspace,
                env=["DSH_PY_TEST_TOKEN"], unset_env=["PY_PLAIN_VAR"])
        finally:
            del os.environ["DSH_PY_TEST_TOKEN"], os.environ["PY_PLAIN_VAR"]
        self.assertEqual(result.stdout, "kept/none\n")

    def test_allow_list_reaches_the_server_only_for_a_listed_name(self):
        server = HttpServer(self.base)
        self.addCleanup(server.stop)
        resolve = ["allowed.test=127.0.0.1", "other.test=127.0.0.1"]
        script = (f"curl -sS http://allowed.test:{server.port}/marker.txt; "
                  f"curl -s -o /dev/null -w '%{{http_code}}\\n' http://other.test:{server.port}/other.txt")
        # 127.0.0.1 is listed too: the proxy drops a name's loopback address unless an address
        # entry admits it (docs/evidence-and-network.md).
        result = dsh_sandbox.run(["sh", "-c", script], workspace_root=self.workspace,
                                 network=["allowed.test", "127.0.0.1"], network_resolve=resolve)
        self.assertEqual(result.network, "allow-list")
        first, second = result.stdout.split("\n")[:2]
        self.assertEqual(first, "reached through dsh-netproxy")
        self.assertNotEqual(second, "200")
        unlisted = dsh_sandbox.run(
            ["curl", "-fsS", f"http://allowed.test:{server.port}/unlisted.txt"],
            workspace_root=self.workspace, network="allow:other.test", network_resolve=resolve)
        self.assertNotEqual(unlisted.exit_code, 0)
        denied = dsh_sandbox.run(["curl", "-fsS", f"http://127.0.0.1:{server.port}/denied.txt"],
                                 workspace_root=self.workspace)
        self.assertNotEqual(denied.exit_code, 0)
        requests = server.requests()
        self.assertIn("/marker.txt", requests)
        for path in ("/other.txt", "/unlisted.txt", "/denied.txt"):
            self.assertNotIn(path, requests)

    def test_cancel_ends_the_whole_tree(self):
        token = f"2.{nonce()}"
        marker = os.path.join(self.workspace, "cancel-marker")
        # Left alone, the command does write its marker: what its absence below means.
        alone = dsh_sandbox.run(self.grandchild_script(token, marker), mode="workspace-write",
                                workspace_root=self.workspace)
        self.assertEqual(alone.exit_code, 0)
        self.assertTrue(os.path.exists(marker))
        os.remove(marker)
        token += "1"
        cancel = threading.Event()
        printed = []
        started = []

        def on_stdout(chunk):
            found = re.search(r"pid (\d+)", chunk)
            if found and not printed:
                printed.append(int(found.group(1)))
                started.append(time.monotonic())
        outcome = {}

        def call():
            try:
                dsh_sandbox.run(self.grandchild_script(token, marker), mode="workspace-write",
                                workspace_root=self.workspace, on_stdout=on_stdout, cancel=cancel)
            except BaseException as error:  # the assertion is on the main thread
                outcome["error"] = error
        thread = threading.Thread(target=call)
        thread.start()
        pid = until("the grandchild, seen from outside",
                    lambda: not thread.is_alive() or (printed and host_pid(token, printed[0])))
        if not thread.is_alive():  # the run ended on its own: its error is the failure to show
            raise AssertionError(f"the run ended before it was cancelled: {outcome.get('error')!r}")
        cancel.set()
        thread.join(60)
        error = outcome.get("error")
        self.assertIsInstance(error, dsh_sandbox.SandboxCancelledError)
        self.assertEqual(error.code, "CANCELLED")
        self.assertEqual(error.result.interrupted, "SIGTERM")
        self.assertTrue(gone(pid, token))
        self.assertEqual(pids_with(token), [])
        # Past the grandchild's 2 s, with a margin: the marker it would have written is absent.
        time.sleep(max(0.0, started[0] + 3 - time.monotonic()))
        self.assertFalse(os.path.exists(marker))

    def test_a_callback_that_raises_ends_the_tree(self):
        # Had the call waited for the command instead, the marker would be there when it returned.
        token = f"2.{nonce()}"
        marker = os.path.join(self.workspace, "callback-marker")

        def on_stdout(chunk):
            raise RuntimeError("the harness failed")
        with self.assertRaisesRegex(RuntimeError, "the harness failed"):
            dsh_sandbox.run(["sh", "-c", f"echo first; sleep {token}; touch {marker}"],
                            mode="workspace-write", workspace_root=self.workspace,
                            on_stdout=on_stdout)
        self.assertEqual(pids_with(token), [])
        self.assertFalse(os.path.exists(marker))

    def test_bad_input_is_typed_and_runs_nothing(self):
        marker = os.path.join(self.workspace, "bad-input-marker")
        touch = ["touch", marker]
        cases = [
            (dsh_sandbox.run, dict(timeout=601), "600"),
            (dsh_sandbox.run, dict(max_procesess=3), "unknown option max_procesess"),
            (dsh_sandbox.run, dict(allow_write=[1]), "list of strings"),
            (dsh_sandbox.run, dict(network={"allow": []}), "at least one"),
            (dsh_sandbox.run, dict(mode="read-only", allow_write=[self.base]), "workspace-write"),
            (dsh_sandbox.start, dict(timeout=5), "start does not take timeout"),
            (dsh_sandbox.confine, dict(mode="bogus"), "bogus"),
            (dsh_sandbox.run, dict(cwd=os.path.join(self.base, "no-such-dir")), "not an existing directory"),
        ]
        for call, options, text in cases:
            with self.subTest(options=options):
                options.setdefault("mode", "workspace-write")
                with self.assertRaises(dsh_sandbox.SandboxInputError) as caught:
                    call(touch, workspace_root=self.workspace, **options)
                self.assertIn(text, str(caught.exception))
        with self.assertRaises(dsh_sandbox.SandboxInputError):
            dsh_sandbox.run("touch x", workspace_root=self.workspace)
        for call in (dsh_sandbox.run, dsh_sandbox.start, dsh_sandbox.confine):
            with self.assertRaises(dsh_sandbox.SandboxUnavailableError):
                call(touch, workspace_root=self.workspace, binary="/nonexistent/dsh-sandbox")
        self.assertFalse(os.path.exists(marker))

    def test_example(self):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
        out = subprocess.run([sys.executable, os.path.join(HERE, "..", "examples", "harness.py"),
                              self.workspace], env=env, capture_output=True, text=True,
                             check=True).stdout
        self.assertIn("[live] hello", out)
        self.assertIn("denied by the sandbox: True", out)
        self.assertFalse(os.path.exists(os.path.join(self.base, "outside")))


class JobTest(WorkspaceCase):
    def test_start_output_wait_list_kill(self):
        done = dsh_sandbox.start(["sh", "-c", "echo job-done; exit 3"],
                                 workspace_root=self.workspace)
        self.assertRegex(done.handle, r"^[0-9a-f]{16}$")
        ended = done.wait(timeout=60)
        self.assertEqual((ended.state, ended.exit_code, ended.stdout), ("completed", 3, "job-done\n"))

        token = f"30.{nonce()}"
        job = dsh_sandbox.start(["sh", "-c", f"echo job-started; sleep {token}"],
                                workspace_root=self.workspace)
        until("the job's first output", lambda: "job-started" in job.output().stdout)
        pids = until("the job's sleep, seen from outside", lambda: pids_with(token))
        self.assertEqual(job.wait(timeout=1).state, "running")
        self.assertTrue(any(entry.handle == job.handle and entry.state == "running"
                            for entry in dsh_sandbox.list_jobs()))
        job.kill()
        self.assertEqual(job.output().state, "killed")
        self.assertTrue(all(gone(pid, token) for pid in pids))
        self.assertEqual(pids_with(token), [])

    def test_option_table(self):
        run = dsh_sandbox.OPTIONS["run"]
        self.assertEqual((run["deny_read"]["flag"], run["deny_read"]["kind"]),
                         ("--deny-read", "repeatable"))
        self.assertEqual(run["cwd"]["flag"], "--workdir")
        self.assertEqual(dsh_sandbox.OPTIONS["confine"]["cwd"]["flag"], "--cwd")


if __name__ == "__main__":
    unittest.main()
