// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/io.h"
#include "base/text.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "local/private_directory.h"
#include "local/probe_cache.h"

namespace dsh::sandbox::jobs {

namespace {

constexpr int kVersion = 1;

std::string errno_text(int error) { return std::generic_category().message(error); }

// A directory entry that is ours alone: a directory (or regular file) of this user, mode 0700
// (0600), checked on the descriptor that was opened without following a symlink.
bool owner_only(int fd, bool directory) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || info.st_uid != ::geteuid() || (info.st_mode & 0077) != 0) {
    return false;
  }
  return directory ? S_ISDIR(info.st_mode) : S_ISREG(info.st_mode);
}

[[noreturn]] void refuse(const std::string& message) { throw InvalidSandboxInputError(message); }

}  // namespace

std::string new_handle() { return consumer::output_nonce(); }

bool valid_handle(std::string_view handle) {
  if (handle.size() != 16) return false;
  for (const char c : handle) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

unsigned long long process_start_time(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // comm may hold spaces and parentheses: the fields after it start after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  // Field 3 (state) is the first after comm; the start time is field 22.
  for (int index = 3; index <= 22 && (fields >> field); ++index) {
    if (index == 3 && (field == "Z" || field == "X")) return 0;  // exited, not yet reaped
    if (index == 22) return std::stoull(field);
  }
  return 0;
}

namespace {

// The per-user cache directory, else (a user without a usable $XDG_RUNTIME_DIR) the fallback.
std::string jobs_base() {
  std::string base = local::user_cache_directory();
  return base.empty() ? local::fallback_jobs_base() : base;
}

}  // namespace

std::string jobs_directory_path() { return jobs_base() + "/jobs"; }

UniqueFd open_jobs_directory(std::span<const std::string> roots, bool create) {
  const std::string base = jobs_base();
  if (create) ::mkdir(base.c_str(), 0700);
  // Reading, a directory that does not exist holds no job: nothing to trust and nothing to
  // refuse (a first `job-list` of a user who never started one), as with a missing jobs/ below.
  struct stat missing {};
  if (!create && ::lstat(base.c_str(), &missing) != 0 && errno == ENOENT) return UniqueFd();
  // Checked whether or not this call made it: a directory another user or a confined run
  // planted (or a symlink) fails the owner, mode or trust check, and nothing in it is used.
  auto dir = local::open_private_directory(base, roots);
  if (!dir) {
    refuse(fmt::format(
        "background jobs cannot be kept in {}: {}; it must be a 0700 directory of yours outside "
        "every root a confined run can write (the workspace, /tmp, $TMPDIR): point TMPDIR or the "
        "workspace elsewhere, remove it if it is not one of yours, or set XDG_RUNTIME_DIR to a "
        "private directory of yours",
        text::quoted(base), dir.error().message));
  }
  // The fallback in /var/tmp is taken only as the directory itself, never through a symlink
  // (the trust walk would follow one of this user's; here nothing needs one).
  if (base == local::fallback_jobs_base() && dir.value().path != base) {
    refuse(fmt::format("background jobs cannot be kept in {}: it is a symlink (to {}); remove it",
                       text::quoted(base), text::quoted(dir.value().path)));
  }
  if (create) ::mkdirat(dir.value().fd.get(), "jobs", 0700);
  UniqueFd jobs(
      ::openat(dir.value().fd.get(), "jobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (jobs.get() < 0 && errno == ENOENT && !create) return jobs;  // no job was ever started
  if (jobs.get() < 0 || !owner_only(jobs.get(), true)) {
    refuse(fmt::format(
        "{} is not a directory of uid {} with mode 0700; remove it (it holds only background "
        "jobs' state)",
        text::quoted(base + "/jobs"), ::geteuid()));
  }
  return jobs;
}

JobDirectory JobDirectory::create(int jobs_dir, const std::string& handle) {
  if (::mkdirat(jobs_dir, handle.c_str(), 0700) != 0) {
    refuse(fmt::format("cannot create the job directory {}: {}", handle, errno_text(errno)));
  }
  auto opened = open(jobs_dir, handle);
  if (!opened) refuse("the new job directory vanished");
  return std::move(*opened);
}

std::optional<JobDirectory> JobDirectory::open(int jobs_dir, const std::string& handle) {
  if (jobs_dir < 0 || !valid_handle(handle)) return std::nullopt;
  UniqueFd dir(::openat(jobs_dir, handle.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    refuse(fmt::format("the job {} cannot be opened ({}); remove {}", handle, errno_text(errno),
                       text::quoted(jobs_directory_path() + "/" + handle)));
  }
  if (!owner_only(dir.get(), true)) {
    refuse(fmt::format("the job {} is not a directory of uid {} with mode 0700; remove {}", handle,
                       ::geteuid(), text::quoted(jobs_directory_path() + "/" + handle)));
  }
  return JobDirectory(std::move(dir), handle);
}

void JobDirectory::write(std::string_view name, std::string_view bytes) const {
  const std::string temp = fmt::format(".{}.tmp", name);
  ::unlinkat(dir_.get(), temp.c_str(), 0);
  const UniqueFd fd(::openat(dir_.get(), temp.c_str(),
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  const bool written = fd.get() >= 0 && io::write_all(fd.get(), bytes) == bytes.size();
  // rename(2) is atomic: a reader sees the old file or the new one, never half of one.
  if (!written ||
      ::renameat(dir_.get(), temp.c_str(), dir_.get(), std::string(name).c_str()) != 0) {
    const int error = errno;
    ::unlinkat(dir_.get(), temp.c_str(), 0);
    refuse(fmt::format("cannot write the job's {}: {}", name, errno_text(error)));
  }
}

std::optional<std::string> JobDirectory::read(std::string_view name, std::size_t limit) const {
  const UniqueFd fd(::openat(dir_.get(), std::string(name).c_str(),
                             O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    refuse(fmt::format(
        "the job {}'s {} cannot be opened ({}): it is not a file the sandbox "
        "wrote; remove {}",
        handle_, name, errno_text(errno), text::quoted(jobs_directory_path() + "/" + handle_)));
  }
  if (!owner_only(fd.get(), false)) {
    refuse(fmt::format("the job {}'s {} is not a regular 0600 file of uid {}; remove {}", handle_,
                       name, ::geteuid(), text::quoted(jobs_directory_path() + "/" + handle_)));
  }
  std::string bytes;
  if (!io::read_all(fd.get(), bytes, limit).ok()) {
    refuse(fmt::format("the job {}'s {} cannot be read whole", handle_, name));
  }
  return bytes;
}

UniqueFd JobDirectory::create_file(std::string_view name) const {
  UniqueFd fd(::openat(dir_.get(), std::string(name).c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600));
  if (fd.get() < 0) refuse(fmt::format("cannot create the job's {}: {}", name, errno_text(errno)));
  return fd;
}

void JobDirectory::remove(int jobs_dir) const {
  const UniqueFd listing(::openat(dir_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (DIR* entries = ::fdopendir(::dup(listing.get()))) {
    // One directory stream, read by this thread alone.
    while (const dirent* entry = ::readdir(entries)) {  // NOLINT(concurrency-mt-unsafe)
      const std::string name = entry->d_name;
      if (name != "." && name != "..") ::unlinkat(dir_.get(), name.c_str(), 0);
    }
    ::closedir(entries);
  }
  ::unlinkat(jobs_dir, handle_.c_str(), AT_REMOVEDIR);
}

std::string encode_record(const JobRecord& record) {
  return nlohmann::json{{"version", kVersion},
                        {"pid", record.pid},
                        {"startTime", record.start_time},
                        {"session", record.session},
                        {"mode", wire_name(record.mode)},
                        {"workspace", record.workspace},
                        {"argv", record.argv},
                        {"startedAt", record.started_at}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

JobRecord decode_record(std::string_view text) {
  try {
    const nlohmann::json value = nlohmann::json::parse(text);
    if (value.at("version").get<int>() != kVersion) refuse("unknown job record version");
    JobRecord record;
    record.pid = value.at("pid").get<pid_t>();
    record.start_time = value.at("startTime").get<unsigned long long>();
    record.session = value.at("session").get<std::string>();
    auto mode = parse_sandbox_mode(value.at("mode").get<std::string>());
    if (!mode || record.pid <= 1) refuse("malformed job record");
    record.mode = mode.value();
    record.workspace = value.at("workspace").get<std::string>();
    record.argv = value.at("argv").get<std::vector<std::string>>();
    record.started_at = value.value("startedAt", 0LL);  // absent in records of earlier versions
    return record;
  } catch (const nlohmann::json::exception& error) {
    refuse(fmt::format("malformed job record: {}", error.what()));
  }
}

namespace {

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> optional_from(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<T>();
}

}  // namespace

std::string encode_outcome(const JobView& view) {
  return nlohmann::json{{"version", kVersion},
                        {"mode", wire_name(view.mode)},
                        {"state", state_name(view.state)},
                        {"lossy", view.lossy},
                        {"fullOutput", view.full_output},
                        {"spawnFailed", optional_json(view.spawn_failed)},
                        {"spawnErrno", view.spawn_errno},
                        {"runnerFailed", view.runner_failed},
                        {"denied", view.denied},
                        {"exitCode", optional_json(view.exit_code)},
                        {"signal", optional_json(view.signal)},
                        {"timedOutMs", optional_json(view.timed_out_ms)},
                        {"gitState", view.git_undone},
                        {"endedBySession", optional_json(view.ended_by)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

JobView decode_outcome(std::string_view text) {
  try {
    const nlohmann::json value = nlohmann::json::parse(text);
    if (value.at("version").get<int>() != kVersion) refuse("unknown job outcome version");
    JobView view;
    auto mode = parse_sandbox_mode(value.at("mode").get<std::string>());
    if (!mode) refuse("malformed job outcome: mode");
    view.mode = mode.value();
    const auto state = value.at("state").get<std::string>();
    if (state == "completed") {
      view.state = JobState::kCompleted;
    } else if (state == "killed") {
      view.state = JobState::kKilled;
    } else {
      refuse("malformed job outcome: state");
    }
    view.lossy = value.at("lossy").get<bool>();
    view.full_output = value.at("fullOutput").get<std::vector<std::string>>();
    view.spawn_failed = optional_from<std::string>(value.at("spawnFailed"));
    view.spawn_errno = value.value("spawnErrno", 0);  // absent in records of earlier versions
    view.runner_failed = value.at("runnerFailed").get<bool>();
    view.denied = value.at("denied").get<bool>() && !view.runner_failed;
    view.exit_code = optional_from<int>(value.at("exitCode"));
    view.signal = optional_from<int>(value.at("signal"));
    view.timed_out_ms = optional_from<long long>(value.at("timedOutMs"));
    // Absent in records of earlier versions.
    view.git_undone = value.value("gitState", std::vector<std::string>());
    if (const auto ended = value.find("endedBySession"); ended != value.end()) {
      view.ended_by = optional_from<std::string>(*ended);
    }
    return view;
  } catch (const nlohmann::json::exception& error) {
    refuse(fmt::format("malformed job outcome: {}", error.what()));
  }
}

std::vector<std::string> list_handles(int jobs_dir) {
  std::vector<std::string> handles;
  if (jobs_dir < 0) return handles;
  if (DIR* entries = ::fdopendir(::dup(jobs_dir))) {
    // One directory stream, read by this thread alone.
    while (const dirent* entry = ::readdir(entries)) {  // NOLINT(concurrency-mt-unsafe)
      if (valid_handle(entry->d_name)) handles.emplace_back(entry->d_name);
    }
    ::closedir(entries);
  }
  return handles;
}

void prune_ended_jobs(int jobs_dir) {
  const time_t now = ::time(nullptr);
  for (const std::string& handle : list_handles(jobs_dir)) {
    try {
      const auto dir = JobDirectory::open(jobs_dir, handle);
      if (!dir) continue;
      struct stat info {};
      if (::fstatat(dir->fd(), std::string(kOutcomeFile).c_str(), &info, AT_SYMLINK_NOFOLLOW) ==
              0 &&
          now - info.st_mtime > kKeepEndedJobSeconds) {
        dir->remove(jobs_dir);
      }
    } catch (const SandboxError&) {
      // Not ours to judge: job-output names it when asked.
    }
  }
}

JobView read_job(const JobDirectory& dir) {
  const auto record_text = dir.read(kRecordFile, kMaxRecordBytes);
  if (!record_text) refuse(fmt::format("the job {} has no record", dir.handle()));
  const JobRecord record = decode_record(*record_text);
  JobView view;
  if (const auto outcome = dir.read(kOutcomeFile, kMaxRecordBytes)) {
    view = decode_outcome(*outcome);
  } else {
    view.mode = record.mode;
    // No outcome yet: running while its supervisor lives, else the supervisor was killed before
    // it could write one (its command's tree was ended with it: docs/contract.md).
    const bool alive = process_start_time(record.pid) == record.start_time;
    view.state = alive ? JobState::kRunning : JobState::kKilled;
  }
  view.out = dir.read(kStdoutFile, kMaxOutputFileBytes).value_or("");
  view.err = dir.read(kStderrFile, kMaxOutputFileBytes).value_or("");
  if (view.state == JobState::kRunning && (view.out.size() >= exec::kDefaultMaxOutputBytes ||
                                           view.err.size() >= exec::kDefaultMaxOutputBytes)) {
    view.lossy = true;  // the live files stop at a tail's size; the rest is in no file yet
  }
  return view;
}

}  // namespace dsh::sandbox::jobs
