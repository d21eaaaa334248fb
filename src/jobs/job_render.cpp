// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_render.h"

#include <cerrno>
#include <csignal>

#include <fmt/format.h>

#include "base/text.h"
#include "consumer/render.h"
#include "dsh/sandbox/escalation.h"

namespace dsh::sandbox::jobs {

std::string runner_failed_marker(SandboxMode mode) {
  return fmt::format(
      "[sandbox: the sandbox runner itself failed under {} mode \u2014 the command did not run; "
      "this is a sandbox problem, not a command failure]",
      wire_name(mode));
}

std::string_view state_name(JobState state) {
  switch (state) {
    case JobState::kRunning:
      return "running";
    case JobState::kCompleted:
      return "completed";
    case JobState::kKilled:
      return "killed";
  }
  return "killed";
}

int job_exit_status(const JobView& job) {
  if (job.state == JobState::kRunning) return kRunningExit;
  if (job.runner_failed) return consumer::kNotRunExit;
  if (job.timed_out_ms) return 124;
  if (job.signal) return 128 + *job.signal;
  if (job.state == JobState::kKilled) {
    // Never started: as a shell reports a program it cannot find (127) or run (126).
    if (job.spawn_failed) return job.spawn_errno == ENOENT ? 127 : 126;
    // Ended from outside with no signal known (its supervisor killed): exec's supervisor
    // SIGKILLs the whole tree.
    return 128 + SIGKILL;
  }
  return job.exit_code.value_or(0);
}

namespace {

// The command's bytes between two fence lines: made inert, each line indented, so that no line
// of theirs can pass for a line of the sandbox's (those start at the margin).
void append_fenced_lines(std::string& text, std::string_view stream, std::string_view bytes,
                         std::string_view nonce) {
  if (bytes.empty()) return;
  text += fmt::format("<{} {}>\n", stream, nonce);
  const std::string shown = text::inert_lines(bytes);
  std::size_t start = 0;
  while (start < shown.size()) {
    const std::size_t end = shown.find('\n', start);
    const std::size_t stop = end == std::string::npos ? shown.size() : end;
    text += kOutputIndent;
    text.append(shown, start, stop - start);
    text += '\n';
    start = stop + 1;
  }
  text += fmt::format("</{} {}>\n", stream, nonce);
}

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
  append_fenced_lines(text, "stdout", job.out, nonce);
  append_fenced_lines(text, "stderr", err, nonce);
  if (text.empty()) text = "(no output)\n";
  if (job.lossy) {
    std::string paths;
    for (const std::string& path : job.full_output) {
      if (!paths.empty()) paths += ", ";
      paths += path.empty() ? "(unavailable)" : text::inert(path);
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
  // What the person must know before their next git command there; the paths in each line are
  // quoted already, and the line is made inert again as it comes from a file.
  for (const std::string& line : job.git_undone) {
    text += fmt::format("[git state: {}]\n", text::inert(line));
  }
  if (job.ended_by) text += fmt::format("[sandbox: {}]\n", text::inert(*job.ended_by));
  text += status_line(job);
  return text;
}

nlohmann::json job_json(std::string_view handle, const JobView& job) {
  const auto optional_int = [](std::optional<int> value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  const bool ran = !job.runner_failed && job.state != JobState::kRunning;
  nlohmann::json denial = nullptr;
  if (job.runner_failed) {
    denial = runner_failed_marker(job.mode);
  } else if (job.denied) {
    denial = sandbox_denial_marker(job.mode);
  }
  return {{"schemaVersion", 1},
          {"handle", handle},
          {"state", state_name(job.state)},
          {"mode", wire_name(job.mode)},
          {"exitCode", ran && !job.signal ? optional_int(job.exit_code) : nullptr},
          {"signal", job.signal ? nlohmann::json(consumer::signal_name(*job.signal)) : nullptr},
          {"timedOut", job.timed_out_ms.has_value()},
          {"runnerFailed", job.runner_failed},
          {"runnerExitCode", job.runner_failed ? optional_int(job.exit_code) : nullptr},
          {"spawnFailed", job.spawn_failed ? nlohmann::json(*job.spawn_failed) : nullptr},
          {"denied", job.denied},
          {"denial", denial},
          {"stdout", job.out},
          {"stderr", job.err},
          {"lossy", job.lossy},
          {"fullOutput", job.full_output},
          {"gitState", job.git_undone},
          {"endedBySession", job.ended_by ? nlohmann::json(*job.ended_by) : nullptr},
          {"exitStatus", job_exit_status(job)}};
}

}  // namespace dsh::sandbox::jobs
