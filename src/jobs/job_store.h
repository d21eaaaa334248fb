// SPDX-License-Identifier: Apache-2.0
// Where background jobs keep their state: one directory per job under the per-user directory of
// the verdict cache (/run/dsh-sandbox for root, $XDG_RUNTIME_DIR/dsh-sandbox for others; without
// a usable $XDG_RUNTIME_DIR, /var/tmp/dsh-sandbox-jobs-<uid>), in `jobs/<handle>/`. That directory
// is trusted state: it lies outside every root a confined mode can write (the trust check, then
// owner-only 0700 on every level), and each file is opened with openat(O_NOFOLLOW) in the checked
// directory and checked on its descriptor (a regular 0600 file of this user), because what it says
// decides which process job-kill signals and what job-output tells a person about a command.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "dsh/sandbox/modes.h"
#include "jobs/job_render.h"

namespace dsh::sandbox::jobs {

inline constexpr std::string_view kRecordFile = "job.json";
inline constexpr std::string_view kOutcomeFile = "outcome.json";
inline constexpr std::string_view kStdoutFile = "stdout";
inline constexpr std::string_view kStderrFile = "stderr";
inline constexpr std::size_t kMaxOutputFileBytes =
    std::size_t{1024} * 1024;  // a tail is 64,000 bytes
inline constexpr std::size_t kMaxRecordBytes = std::size_t{1024} * 1024;

// Who holds the job: its supervisor (pid and start time, so a reused pid is never signalled),
// and what it runs.
struct JobRecord {
  pid_t pid = 0;
  unsigned long long start_time = 0;  // /proc/PID/stat field 22
  std::string session;                // canonical session log path; "" without one
  SandboxMode mode = SandboxMode::kReadOnly;
  std::string workspace;
  std::vector<std::string> argv;
  long long started_at = 0;  // seconds since the epoch, when the supervisor wrote the record
};

// 16 lowercase hex digits from getrandom(2).
std::string new_handle();
// Exactly 16 lowercase hex digits: never a path.
bool valid_handle(std::string_view handle);

// The process's start time (clock ticks since boot) or 0 when it is gone.
unsigned long long process_start_time(pid_t pid);

// The trusted jobs directory (created when `create`); InvalidSandboxInputError naming what to fix
// when there is none or it fails the check. `roots`: what a confined run of this call could write.
UniqueFd open_jobs_directory(std::span<const std::string> roots, bool create);
// Its path, for messages and docs.
std::string jobs_directory_path();

// One job's directory, opened through the trusted jobs directory.
class JobDirectory {
 public:
  static JobDirectory create(int jobs_dir, const std::string& handle);
  // std::nullopt when no such job exists; InvalidSandboxInputError when it is not ours.
  static std::optional<JobDirectory> open(int jobs_dir, const std::string& handle);

  const std::string& handle() const { return handle_; }
  int fd() const { return dir_.get(); }

  // Replaces `name` atomically (a 0600 temp file renamed over it).
  void write(std::string_view name, std::string_view bytes) const;
  // The file's bytes, std::nullopt when absent; InvalidSandboxInputError when it is not a regular
  // 0600 file of this user or larger than `limit`.
  std::optional<std::string> read(std::string_view name, std::size_t limit) const;
  // A new 0600 file for appending (O_EXCL: never an existing one).
  UniqueFd create_file(std::string_view name) const;
  // Removes the job's files and the directory.
  void remove(int jobs_dir) const;

 private:
  JobDirectory(UniqueFd dir, std::string handle)
      : dir_(std::move(dir)), handle_(std::move(handle)) {}
  UniqueFd dir_;
  std::string handle_;
};

std::string encode_record(const JobRecord& record);
JobRecord decode_record(std::string_view text);  // InvalidSandboxInputError when malformed

// The outcome part of a JobView (without the output, which has its own files).
std::string encode_outcome(const JobView& view);
JobView decode_outcome(std::string_view text);  // InvalidSandboxInputError when malformed

// How long an ended job's directory is kept for job-output before a later start removes it.
inline constexpr long long kKeepEndedJobSeconds = 24LL * 60 * 60;
// The handles of the job directories in `jobs_dir` (none when it is -1: no job was ever started).
std::vector<std::string> list_handles(int jobs_dir);

// Removes the directories of jobs that ended more than kKeepEndedJobSeconds ago (best effort:
// anything not ours, or unreadable, is left alone).
void prune_ended_jobs(int jobs_dir);

// Everything job-output shows of the job in `dir`: the outcome when it has one, else running
// (its supervisor alive) or killed (its supervisor gone without an outcome).
JobView read_job(const JobDirectory& dir);

}  // namespace dsh::sandbox::jobs
