"""Against the real CLI (dsh-sandbox on PATH: ctest puts the build's bin/ first). Confinement is
checked from outside: the file the command tried to write is not there."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import dsh_sandbox

HERE = os.path.dirname(os.path.abspath(__file__))


class BindingTest(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="dsh-py-", dir="/var/tmp")
        self.workspace = os.path.join(self.base, "workspace")
        os.mkdir(self.workspace)

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def test_confine_reference_fields(self):
        confined = dsh_sandbox.confine(["ls", "-l"], mode="read-only",
                                       workspace_root=self.workspace)
        self.assertEqual(confined["argv"][-2:], ["ls", "-l"])
        self.assertIn(confined["enforcement"], ("full", "partial"))
        self.assertIsInstance(confined["denialSignatures"], list)
        for rule in confined["runnerFailureRules"]:
            self.assertIsInstance(rule["fatalSignatures"], list)

    def test_confined_argv_cannot_write_outside(self):
        target = os.path.join(self.base, "outside-confine.txt")
        confined = dsh_sandbox.confine(["bash", "-c", f"echo x > {target}"],
                                       mode="workspace-write", workspace_root=self.workspace)
        done = subprocess.run(confined["argv"], cwd=self.workspace, capture_output=True, check=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertFalse(os.path.exists(target))

    def test_run_live_output_and_outcome(self):
        chunks = []
        result = dsh_sandbox.run(["bash", "-c", "echo live; exit 7"], workspace_root=self.workspace,
                                 cwd=self.workspace, on_stdout=chunks.append)
        self.assertEqual(result["exitCode"], 7)
        self.assertEqual(result["exitStatus"], 7)
        self.assertEqual(result["schemaVersion"], 1)
        self.assertEqual("".join(chunks), "live\n")

    def test_run_denial(self):
        target = os.path.join(self.base, "outside-run.txt")
        result = dsh_sandbox.run(["bash", "-c", f"echo x > {target}"], mode="workspace-write",
                                 workspace_root=self.workspace, cwd=self.workspace)
        self.assertTrue(result["denied"])
        self.assertFalse(os.path.exists(target))

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
        self.assertEqual(result["stdout"], "kept/none\n")

    def test_errors(self):
        with self.assertRaises(dsh_sandbox.SandboxError) as caught:
            dsh_sandbox.run(["true"], timeout=601, workspace_root=self.workspace)
        self.assertIn("600", str(caught.exception))
        with self.assertRaises(dsh_sandbox.SandboxError):
            dsh_sandbox.confine(["ls"], mode="bogus", workspace_root=self.workspace)
        with self.assertRaises(dsh_sandbox.SandboxUnavailableError):
            dsh_sandbox.confine(["ls"], workspace_root=self.workspace, binary="/nonexistent/x")

    def test_example(self):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
        out = subprocess.run([sys.executable, os.path.join(HERE, "..", "examples", "harness.py"),
                              self.workspace], env=env, capture_output=True, text=True,
                             check=True).stdout
        self.assertIn("[live] hello", out)
        self.assertIn("denied by the sandbox: True", out)
        self.assertFalse(os.path.exists(os.path.join(self.base, "outside")))


if __name__ == "__main__":
    unittest.main()
