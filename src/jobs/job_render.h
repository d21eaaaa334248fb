// SPDX-License-Identifier: Apache-2.0
// What `dsh-sandbox job-output` tells a person or a model about one background job: its output
// so far, made inert and fenced, every line of it indented, then the sandbox's lines, the status
// line last; or the same as one JSON object; and the exit status that says how the job ended.
// The texts of the lossy note, the runner-failed marker, `spawn failed: ...` and the status line
// are the reference consumer's, byte for byte.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/modes.h"

namespace dsh::sandbox::jobs {

enum class JobState { kRunning, kCompleted, kKilled };

// One job as its supervisor recorded it (src/jobs/job_store.h reads it back).
struct JobView {
  SandboxMode mode = SandboxMode::kReadOnly;
  JobState state = JobState::kRunning;
  std::string out;  // the kept tail of each stream
  std::string err;
  // Some output is not in the tails: the full streams' files, "" for one that has none.
  bool lossy = false;
  std::vector<std::string> full_output;
  std::optional<std::string> spawn_failed;  // why the command (or its runner) never started
  int spawn_errno = 0;                      // the errno of that failure, when it has one
  bool runner_failed = false;               // the runner itself failed: the command did not run
  bool denied = false;                      // never together with runner_failed
  // kCompleted: one of these two. With runner_failed, exit_code is the runner's own code. A
  // killed job may have the signal that ended its command.
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<long long> timed_out_ms;  // the job had a deadline and it passed
  // What the check after a workspace-write job undid in the git state, or named, one line each
  // (consumer::SandboxFacts::git_undone).
  std::vector<std::string> git_undone;
  // The job's session ended it: its mode was switched below the job's, or its log could no
  // longer be read as the session's (policy/session_watch.h). The sentence that says so.
  std::optional<std::string> ended_by;
};

// job-output's and job-wait's exit status for the job: 75 (EX_TEMPFAIL: ask again) while it
// runs; once it ended, its own exit code, 128+N for a signal, 124 when a deadline ended it, 125
// when the runner failed (the command did not run), 126/127 when the command could not be
// started, 128+N for the signal that ended a killed job (137 when none is known).
inline constexpr int kRunningExit = 75;
int job_exit_status(const JobView& job);

// The job's state as a word: "running", "completed", "killed".
std::string_view state_name(JobState state);

// "[sandbox: the sandbox runner itself failed under MODE mode — the command did not run; ...]"
std::string runner_failed_marker(SandboxMode mode);

// The render; `escalation_advertised`: a wider mode is offered to the model (the hint follows a
// denial marker). `nonce` fences the command's bytes (consumer::output_nonce()).
// Every byte of the command's output passes through text::inert_lines, and every line of it is
// indented by kOutputIndent inside its fence, so no line the command printed starts where the
// sandbox's lines (the fences, the markers, the status line) start.
std::string render_job_output(const JobView& job, bool escalation_advertised,
                              std::string_view nonce);
inline constexpr std::string_view kOutputIndent = "  ";

// `job-output --json`: the job's state, exit code or signal, runner failure with the runner's own
// code, denial, the output (JSON strings), and `exitStatus`, what job-output exits with.
nlohmann::json job_json(std::string_view handle, const JobView& job);

}  // namespace dsh::sandbox::jobs
