// SPDX-License-Identifier: Apache-2.0
// The `dsh-sandbox` subcommands, one file each (run.cpp, confine.cpp, probe.cpp, jobs.cpp,
// shell.cpp, tool_schema.cpp, config.cpp). Each takes the parsed flags and returns the process exit
// status; every failure is one "dsh-sandbox: " line on stderr and exit 125 (kFailureExit), and
// nothing runs. docs/contract.md says what each promises.
#pragma once

#include "cli/options.h"

namespace dsh::sandbox::cli {

// Runs ARGV (or bash -c COMMAND) confined, streams its output, exits with its status.
int run(const Options& options);
// Prints the ConfinedArgv as JSON (the reference's field names); runs nothing.
int confine(const Options& options);
// Reports each backend of this platform's chain: usable or not, enforcement, why, how to fix.
int probe(const Options& options);
// `start`: prints the job's handle. `job-output`: the job's render (or its JSON object), exit
// status the job's (jobs::job_exit_status). `job-wait`: the same once the job has ended or its
// --timeout passed. `job-list`: every job of this user, exit 0. `job-kill`: ends one job, or
// every job of a session.
int start_job(const Options& options);
int job_output(const Options& options);
int job_wait(const Options& options);
int job_list(const Options& options);
int job_kill(const Options& options);
// An interactive confined bash behind a pseudo-terminal of ours; the shell's exit status.
int shell(const Options& options);
// Prints the bash tool definition (schema, texts, resolved workdir) as JSON; runs nothing.
int tool_schema(const Options& options);
// Prints the effective config: each key's value and the file it came from; runs nothing.
int config(const Options& options);

}  // namespace dsh::sandbox::cli
