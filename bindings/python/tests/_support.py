"""What both suites use: a scratch workspace, the loopback HTTP server of the packaging tests, and
looks at /proc from outside the sandbox's pid namespace."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HTTP_SERVER = os.environ.get("DSH_HTTP_SERVER") or os.path.join(
    HERE, "..", "..", "..", "tests", "packaging", "http_server.py")
_count = [0]


def nonce():
    _count[0] += 1
    return f"{os.getpid()}{int(time.time() * 1000) % 100000}{_count[0]}"


def pids_with(token):
    """Host pids whose command line contains `token`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if token.encode() in cmdline.read():
                    found.append(int(entry))
        except OSError:
            pass  # it ended meanwhile
    return found


def host_pid(token, ns_pid):
    """The host pid of the process running `token` that is `ns_pid` inside its namespace."""
    for pid in pids_with(token):
        try:
            with open(f"/proc/{pid}/status", encoding="utf-8") as status:
                for line in status:
                    if line.startswith("NSpid:") and int(line.split()[-1]) == ns_pid:
                        return pid
        except OSError:
            pass
    return None


def gone(pid, token):
    """No process `pid` still running `token` (a reused pid runs something else)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return token.encode() not in cmdline.read()
    except OSError:
        return True


def until(what, check, seconds=20):
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class HttpServer:
    """tests/packaging/http_server.py on a scratch site; requests() is its own log."""

    def __init__(self, base):
        self.site = tempfile.mkdtemp(prefix="site-", dir=base)
        with open(os.path.join(self.site, "marker.txt"), "w", encoding="utf-8") as marker:
            marker.write("reached through dsh-netproxy\n")
        self.log = os.path.join(self.site, "requests.log")
        open(self.log, "w", encoding="utf-8").close()
        self.process = subprocess.Popen(["/usr/bin/python3", HTTP_SERVER, self.site, self.log],
                                        stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())

    def requests(self):
        with open(self.log, encoding="utf-8") as log:
            return log.read().split("\n")

    def stop(self):
        self.process.kill()
        self.process.wait()
        self.process.stdout.close()


class WorkspaceCase(unittest.TestCase):
    def setUp(self):
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="dsh-py-", dir="/var/tmp"))
        self.workspace = os.path.join(self.base, "workspace")
        os.mkdir(self.workspace)

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def grandchild_script(self, token, marker):
        """A command whose grandchild prints its pid, then writes `marker` after 2 s."""
        return ["sh", "-c", f"sh -c 'echo \"pid $$\"; sleep {token}; touch {marker}' & wait"]
