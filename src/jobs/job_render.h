// SPDX-License-Identifier: Apache-2.0
// What `dsh-sandbox job-output` tells a person or a model about one background job: its output
// so far (fenced, as the foreground agent render fences it), then the sandbox's lines, the status
// line last. The texts of the lossy note, the runner-failed marker, `spawn failed: ...` and the
// status line are the reference consumer's, byte for byte.
#pragma once

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
  bool runner_failed = false;               // the runner itself failed: the command did not run
  bool denied = false;                      // never together with runner_failed
  std::optional<int> exit_code;             // kCompleted: one of these two
  std::optional<int> signal;
  std::optional<long long> timed_out_ms;  // the job had a deadline and it passed
};

// "[sandbox: the sandbox runner itself failed under MODE mode — the command did not run; ...]"
std::string runner_failed_marker(SandboxMode mode);

// The render; `escalation_advertised`: a wider mode is offered to the model (the hint follows a
// denial marker). `nonce` fences the command's bytes (consumer::output_nonce()).
std::string render_job_output(const JobView& job, bool escalation_advertised,
                              std::string_view nonce);

}  // namespace dsh::sandbox::jobs
