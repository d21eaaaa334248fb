// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox start`, `job-output`, `job-wait`, `job-list` and `job-kill`: background jobs held by
// a detached job supervisor, their state in the trusted per-user job directory (src/jobs/).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "cli/call.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "jobs/job_store.h"
#include "jobs/job_supervisor.h"

namespace dsh::sandbox::cli {

namespace {

// job-wait --timeout: poll(2) takes an int of milliseconds; a day is far below its bound.
constexpr double kMaxWaitSeconds = 24.0 * 60 * 60;

// What job-output and job-kill check the job directory against: they have no workspace, so
// /tmp and $TMPDIR (the job directory is owner-only on every level besides).
std::vector<std::string> common_roots() { return untrusted_roots("", {}, user_temp_dir()); }

// A session log's canonical path: what a job records and job-kill --session compares.
std::string canonical_file(const std::string& path) {
  std::string absolute = path;
  if (!absolute.starts_with('/')) absolute = working_directory() + "/" + absolute;
  std::array<char, PATH_MAX> resolved{};
  return ::realpath(absolute.c_str(), resolved.data()) != nullptr ? resolved.data() : absolute;
}

jobs::JobDirectory open_job(int jobs_dir, const std::string& handle, std::string_view command) {
  if (!jobs::valid_handle(handle)) {
    throw InvalidSandboxInputError(
        fmt::format("{}: {} is not a job handle (16 hex digits, as dsh-sandbox start printed it)",
                    command, text::quoted(handle)));
  }
  auto dir = jobs::JobDirectory::open(jobs_dir, handle);
  if (!dir) {
    throw InvalidSandboxInputError(fmt::format("{}: there is no job {} of uid {} (jobs live in {})",
                                               command, handle, ::geteuid(),
                                               text::quoted(jobs::jobs_directory_path())));
  }
  return std::move(*dir);
}

// The job's first session-log line, written before its command runs, so the session counts its
// workspace as written (under workspace-write) from the start; the outcome follows at settlement
// (job_supervisor.cpp). A log that cannot take it stops the start: the session would not know.
void audit_start(const plan::CallPlan& call, const consumer::RunSpec& spec,
                 const std::optional<ConfinedArgv>& confined, const std::string& handle) {
  if (!call.session) return;
  SandboxRunEvent event;
  event.argv = spec.argv;
  event.mode = spec.policy.mode;
  event.workspace_root = spec.policy.workspace_root;
  if (confined) {
    event.backend = confined->backend;
    event.enforcement = std::string(wire_name(confined->enforcement));
  }
  event.job = handle;
  event.job_state = "started";
  try {
    record_run(*call.session, event);
  } catch (const std::exception& error) {
    throw InvalidSandboxInputError(fmt::format(
        "start: the session log cannot record the job, so it was not started: {}", error.what()));
  }
}

void check_start_flags(Options& options) {
  if (options.argv.empty() && options.command.empty()) {
    throw InvalidSandboxInputError("start: give the command: -c COMMAND, or -- ARGV...");
  }
}

// The provider's refusals (no usable backend, an untrusted runner) are this call's errors; only
// the runner's spawn, in the job supervisor, is the job's outcome.
std::optional<ConfinedArgv> confine_job(LocalSandboxProvider& provider,
                                        const consumer::RunSpec& spec) {
  const auto policy = to_sandbox_policy(spec.policy);
  if (!policy) return std::nullopt;
  try {
    return provider.confine(ConfineRequest{spec.argv, *policy, spec.process.workdir});
  } catch (const SandboxUnavailableError&) {
    provider.invalidate_verdict();
    throw;
  }
}

int start_call(Call& call) {
  consumer::RunSpec spec;
  spec.argv = call.run.argv;
  spec.policy = call.plan->policy;
  spec.process.workdir = call.plan->workdir;
  spec.process.bounds = call.run.bounds;
  plan::admit(*call.plan, spec.policy, "dsh-sandbox");
  LocalSandboxProvider provider = plan::plan_provider(*call.plan);
  const std::optional<ConfinedArgv> confined = confine_job(provider, spec);
  const UniqueFd jobs =
      jobs::open_jobs_directory(plan::state_untrusted_roots(*call.plan, spec.policy), true);
  consumer::SandboxBashExecutor executor(provider);
  const std::optional<SessionLog>& session_log = call.plan->session;
  const std::string session = session_log ? canonical_file(session_log->path()) : "";
  jobs::prune_ended_jobs(jobs.get());
  jobs::JobLaunch launch{std::move(spec), session, session_log, call.plan->session_start,
                         jobs::new_handle()};
  audit_start(*call.plan, launch.spec, confined, launch.handle);
  const std::string handle = jobs::launch_job(jobs.get(), executor, std::move(launch));
  fmt::print("{}\n", handle);
  return 0;
}

}  // namespace

int start_job(const Options& options) {
  return prepared_call(options, check_start_flags, start_call, true);
}

namespace {

// The job's render or its JSON object on stdout; the job's exit status (jobs::job_exit_status).
int show_job(const jobs::JobDirectory& dir, bool json) {
  const jobs::JobView view = jobs::read_job(dir);
  if (json) {
    // ASCII only: every control byte and every non-ASCII character of the output is a \u
    // escape, so the object itself is safe on a terminal.
    print_json(jobs::job_json(dir.handle(), view));
  } else {
    const bool advertised = !wider_modes(view.mode).empty();
    fmt::print("{}\n", jobs::render_job_output(view, advertised, consumer::output_nonce()));
  }
  return jobs::job_exit_status(view);
}

// argv on one line for a listing: inert (its newlines and tabs spelled out too).
std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    line += text::inert(arg);
  }
  return line;
}

}  // namespace

int job_output(const Options& options) {
  try {
    const UniqueFd jobs = jobs::open_jobs_directory(common_roots(), false);
    return show_job(open_job(jobs.get(), options.handle, "job-output"), options.json);
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

int job_wait(const Options& options) {
  const double timeout_seconds = options.wait_timeout_seconds;
  if (options.timeout_given && !(timeout_seconds > 0 && timeout_seconds <= kMaxWaitSeconds)) {
    return fail(fmt::format("job-wait: --timeout must be a positive number of seconds, at most {}",
                            kMaxWaitSeconds));
  }
  try {
    const UniqueFd jobs = jobs::open_jobs_directory(common_roots(), false);
    const jobs::JobDirectory dir = open_job(jobs.get(), options.handle, "job-wait");
    const int limit_ms = timeout_seconds > 0 ? static_cast<int>(timeout_seconds * 1000) : -1;
    (void)jobs::wait_for_job(dir, limit_ms);  // still running after the limit: shown as such
    return show_job(dir, options.json);
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

namespace {

struct ListedJob {
  std::string handle;
  jobs::JobRecord record;
  jobs::JobView view;
};

// Every job of this user that can be read, oldest first. A job this user's own processes broke
// is named on stderr and skipped; the others are listed.
std::vector<ListedJob> listed_jobs(int jobs_dir) {
  std::vector<ListedJob> listed;
  for (const std::string& handle : jobs::list_handles(jobs_dir)) {
    try {
      const auto dir = jobs::JobDirectory::open(jobs_dir, handle);
      const auto record = dir ? dir->read(jobs::kRecordFile, jobs::kMaxRecordBytes) : std::nullopt;
      if (!record) continue;
      listed.push_back({handle, jobs::decode_record(*record), jobs::read_job(*dir)});
    } catch (const SandboxError& error) {
      fmt::print(stderr, "dsh-sandbox: job-list: skipped: {}\n", error.what());
    }
  }
  std::sort(listed.begin(), listed.end(), [](const ListedJob& a, const ListedJob& b) {
    return std::tie(a.record.started_at, a.handle) < std::tie(b.record.started_at, b.handle);
  });
  return listed;
}

// One job of job-list --json: job-output --json's fields without the output, with the record's.
nlohmann::json listed_json(const ListedJob& job) {
  nlohmann::json entry = jobs::job_json(job.handle, job.view);
  for (const char* field : {"stdout", "stderr", "fullOutput", "lossy", "schemaVersion"}) {
    entry.erase(field);
  }
  entry["argv"] = job.record.argv;
  entry["workspace"] = job.record.workspace;
  entry["session"] =
      job.record.session.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.record.session);
  entry["startedAt"] = job.record.started_at;
  return entry;
}

}  // namespace

int job_list(const Options& options) {
  const bool json = options.json;
  try {
    const UniqueFd jobs = jobs::open_jobs_directory(common_roots(), false);
    nlohmann::json all = nlohmann::json::array();
    for (const ListedJob& job : listed_jobs(jobs.get())) {
      if (json) {
        all.push_back(listed_json(job));
      } else {
        fmt::print("{}  {:<9}  {}\n", job.handle, jobs::state_name(job.view.state),
                   command_line(job.record.argv));
      }
    }
    if (json) {
      print_json(nlohmann::json{{"schemaVersion", 1}, {"jobs", all}});
    }
    return 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

int job_kill(const Options& options) {
  const std::string& handle = options.handle;
  const std::string& session = options.session_path;
  try {
    if (handle.empty() == session.empty()) {
      throw InvalidSandboxInputError("job-kill: give either a job handle or --session FILE");
    }
    const UniqueFd jobs = jobs::open_jobs_directory(common_roots(), false);
    if (!handle.empty()) {
      const jobs::JobDirectory dir = open_job(jobs.get(), handle, "job-kill");
      if (!jobs::kill_job(dir)) {
        fmt::print(stderr, "dsh-sandbox: job {} had already ended\n", handle);
      }
      return 0;
    }
    const std::string absolute = canonical_file(session);
    const std::vector<std::string> handles = jobs::list_handles(jobs.get());
    for (const std::string& each : handles) {
      // A job this user's own processes broke (not ours to read) is named and skipped: it cannot
      // say which session it belongs to, and the others still end.
      try {
        const auto dir = jobs::JobDirectory::open(jobs.get(), each);
        if (!dir) continue;
        const auto record = dir->read(jobs::kRecordFile, jobs::kMaxRecordBytes);
        if (record && jobs::decode_record(*record).session == absolute) jobs::kill_job(*dir);
      } catch (const SandboxError& error) {
        fmt::print(stderr, "dsh-sandbox: job-kill: skipped: {}\n", error.what());
      }
    }
    return 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
