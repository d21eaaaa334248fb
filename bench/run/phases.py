#!/usr/bin/env python3
"""Cuts `perf script` output of bench/run/phases.sh into the phases of each run, medians in ms.

Usage: phases.py BACKEND RUN_TRACE ARGV_TRACE
RUN_TRACE holds `dsh-sandbox run` started RUNS times by a shell loop; ARGV_TRACE the same runner
argv started directly. A run whose events are incomplete (a lost event) is left out and counted.
"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(?P<comm>.+?)\s+(?P<pid>\d+)\s+\[\d+\]\s+(?P<ts>[\d.]+):\s+"
                  r"(?P<event>[\w:]+):\s*(?P<rest>.*)$")


def events(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        match = LINE.match(line)
        if not match:
            continue
        rest = match["rest"]
        yield (match["event"], int(match["pid"]), float(match["ts"]) * 1e3, rest)


def field(rest, name):
    match = re.search(rf"\b{name}=(\S+)", rest)
    return match.group(1) if match else None


class Process:
    def __init__(self, parent, forked):
        self.parent, self.forked = parent, forked
        self.exec_at = self.exec_file = self.exit_at = self.first_cgroup = None
        self.children = []


def processes(path):
    table = {}
    for event, pid, ts, rest in events(path):
        if event == "sched:sched_process_fork":
            child = int(field(rest, "child_pid"))
            table[child] = Process(pid, ts)
            if pid in table:
                table[pid].children.append(table[child])
        elif pid not in table:
            continue
        elif event == "sched:sched_process_exec":
            table[pid].exec_at, table[pid].exec_file = ts, field(rest, "filename")
        elif event == "sched:sched_process_exit":
            if table[pid].exit_at is None:
                table[pid].exit_at = ts
        elif event == "syscalls:sys_enter_mkdir":
            # 0x1ed is mode 0755: a cgroup child; the CLI's own state directory is made 0700.
            if rest.rstrip().endswith("0x000001ed") and table[pid].first_cgroup is None:
                table[pid].first_cgroup = ts
    return table


def run_phases(table):
    """Per `dsh-sandbox run`: the cut points, as a list of (phase name, duration)."""
    out, incomplete = [], 0
    for cli in table.values():
        if not (cli.exec_file or "").endswith("/dsh-sandbox") or cli.exec_at is None:
            continue
        supervisor = next(iter(cli.children), None)
        command = supervisor and next((c for c in supervisor.children if c.exec_at), None)
        if command is None:
            incomplete += 1
            continue
        cgroups = cli.first_cgroup if cli.first_cgroup is not None else supervisor.forked
        cuts = [
            ("exec of the CLI", cli.forked, cli.exec_at),
            ("CLI: parse, policy, trust, plan", cli.exec_at, cgroups),
            ("CLI: cgroups of the run", cgroups, supervisor.forked),
            ("supervisor: start the runner", supervisor.forked, command.exec_at),
            ("runners and /bin/true", command.exec_at, command.exit_at),
            ("supervisor: end tree, rmdir, report", command.exit_at, supervisor.exit_at),
            ("CLI: reap, report, exit", supervisor.exit_at, cli.exit_at),
        ]
        if any(a is None or b is None for _, a, b in cuts):
            incomplete += 1
            continue
        out.append([(name, b - a) for name, a, b in cuts])
    return out, incomplete


def argv_phases(table, runner):
    out = []
    for proc in table.values():
        if proc.exec_file == runner and proc.exec_at is not None and proc.exit_at is not None:
            if table.get(proc.parent) and table[proc.parent].exec_file == runner:
                continue  # a runner's own child (bwrap forks itself), not a started runner
            out.append([("exec of the runner", proc.exec_at - proc.forked),
                        ("runners and /bin/true", proc.exit_at - proc.exec_at)])
    return out


def median_of(rows, index):
    return statistics.median(row[index][1] for row in rows)


def main():
    backend, run_trace, argv_trace = sys.argv[1:4]
    run_table = processes(run_trace)
    runs, incomplete = run_phases(run_table)
    if not runs:
        sys.exit(f"{backend}: no complete run in {run_trace}")
    runner = next(p.exec_file for cli in run_table.values()
                  for s in cli.children for p in s.children if p.exec_file)
    direct = argv_phases(processes(argv_trace), runner)
    print(f"{backend}: {len(runs)} runs ({incomplete} incomplete), {len(direct)} direct runner "
          f"starts; medians in ms")
    for index, (name, _) in enumerate(runs[0]):
        print(f"  {name:40} {median_of(runs, index):6.3f}")
    total = statistics.median(sum(d for _, d in row) for row in runs)
    print(f"  {'whole run (fork to exit)':40} {total:6.3f}")
    if direct:
        whole = statistics.median(sum(d for _, d in row) for row in direct)
        print(f"  {'direct: exec of the runner':40} {median_of(direct, 0):6.3f}")
        print(f"  {'direct: runners and /bin/true':40} {median_of(direct, 1):6.3f}")
        print(f"  {'direct: whole (fork to exit)':40} {whole:6.3f}")
        print(f"  {'the CLI share (whole run - direct)':40} {total - whole:+6.3f}")


if __name__ == "__main__":
    main()
