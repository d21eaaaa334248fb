// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_render.h"

#include <fmt/format.h>

#include "consumer/render.h"
#include "dsh/sandbox/escalation.h"

namespace dsh::sandbox::jobs {

std::string runner_failed_marker(SandboxMode mode) {
  return fmt::format(
      "[sandbox: the sandbox runner itself failed under {} mode \u2014 the command did not run; "
      "this is a sandbox problem, not a command failure]",
      wire_name(mode));
}

namespace {

std::string status_line(const JobView& job) {
  switch (job.state) {
    case JobState::kRunning:
      return "[status: running]";
    case JobState::kKilled:
      return "[status: killed, killed before exit]";
    case JobState::kCompleted:
      break;
  }
  if (job.signal) {
    return fmt::format("[status: completed, killed by signal: {}]",
                       consumer::signal_name(*job.signal));
  }
  return fmt::format("[status: completed, exit code: {}]", job.exit_code.value_or(0));
}

}  // namespace

std::string render_job_output(const JobView& job, bool escalation_advertised,
                              std::string_view nonce) {
  std::string text;
  std::string err = job.err;
  // The spawn error is the sandbox's own line about the command, shown where the command's
  // stderr would be (the reference puts it under [stderr]).
  if (job.spawn_failed) {
    if (!err.empty() && !err.ends_with('\n')) err += '\n';
    err += "spawn failed: " + *job.spawn_failed + "\n";
  }
  consumer::append_fenced(text, "stdout", job.out, nonce);
  consumer::append_fenced(text, "stderr", err, nonce);
  if (text.empty()) text = "(no output)\n";
  if (job.lossy) {
    std::string paths;
    for (const std::string& path : job.full_output) {
      if (!paths.empty()) paths += ", ";
      paths += path.empty() ? "(unavailable)" : path;
    }
    if (paths.empty()) paths = "(unavailable)";
    text += fmt::format("[some output was dropped from memory; full output: {}]\n", paths);
  }
  if (job.runner_failed) {
    text += runner_failed_marker(job.mode) + "\n";  // replaces the denial marker
  } else if (job.denied) {
    text += sandbox_denial_marker(job.mode) + "\n";
    if (escalation_advertised) text += escalation_hint_marker("command") + "\n";
  }
  if (job.timed_out_ms) text += fmt::format("[timed out after {}ms]\n", *job.timed_out_ms);
  text += status_line(job);
  return text;
}

}  // namespace dsh::sandbox::jobs
