// SPDX-License-Identifier: Apache-2.0
// Starting, and ending, a background job. A job outlives the CLI call that started it, so a
// detached supervisor process of ours holds it:
//
//     dsh-sandbox start ─ fork ─ setsid ─ fork ─ job supervisor (own session, no terminal)
//                                                  └─ exec's run supervisor (own process group,
//                                                     subreaper, cgroup) ─ the confined command
//
// The job supervisor runs the command through the bash consumer (the same confinement,
// classification and tree clean-up as `run`), writes its output live and its outcome at the end
// into the job's trusted directory (job_store.h), and ends the command's tree when asked
// (SIGTERM from job-kill), when its session no longer allows what it was started with (a switch
// narrows the session below the job's mode, or the log can no longer be read as the session's:
// removed, replaced, corrupt; policy/session_watch.h), or when it is itself killed (exec's
// supervisor sees its control pipe close and kills the tree).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "consumer/bash_executor.h"
#include "dsh/sandbox/policy_service.h"
#include "jobs/job_store.h"
#include "policy/session_watch.h"

namespace dsh::sandbox::jobs {

struct JobLaunch {
  consumer::RunSpec spec;  // its own timeout unused: the job's deadline is deadline_ms
  std::string session;     // canonical session log path, "" without one
  // The session's log, opened with the call's trust roots: the job's outcome is appended to it
  // at settlement (a sandbox/run line with the job's handle, or sandbox/refused when the runner
  // failed). A log removed meanwhile (the session ended) takes nothing.
  std::optional<SessionLog> log;
  // The session as the call saw it before it resolved the job's policy; nullopt: as the job
  // supervisor finds it when it starts watching.
  std::optional<policy::SessionStart> session_start;
  std::string handle;  // the job's handle; empty: a new one
  // start --timeout: the job's tree is ended this long after it started (SIGTERM, then SIGKILL
  // after exec's grace) and its outcome says it timed out; nullopt: it runs until it ends.
  std::optional<double> deadline_ms;
};

// Forks the job supervisor and returns the job's handle once the job has started (its record
// written). Errors before the start (a provider that refuses, a bad workdir handling) are thrown
// here as the provider threw them; a runner that cannot be spawned is the job's outcome (the
// reference's background runner failure: no immediate error channel, it surfaces through
// job-output). `executor` is used in the forked process only.
std::string launch_job(int jobs_dir, consumer::SandboxBashExecutor& executor, JobLaunch launch);

// The outcome a finished (or failed-to-spawn) job records.
JobView view_of(const consumer::RunOutcome& outcome);

// Ends the job: SIGTERM to its supervisor (checked by pid and start time, through a pidfd), which
// ends the command's whole tree and records the outcome; waits until the supervisor is gone.
// False when the job had already ended.
bool kill_job(const JobDirectory& dir);

// Blocks until the job has ended (its supervisor gone, through a pidfd: no polling of files) or
// `limit_ms` passed (-1: no limit). True when it has ended.
bool wait_for_job(const JobDirectory& dir, int limit_ms);

}  // namespace dsh::sandbox::jobs
