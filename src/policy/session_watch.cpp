// SPDX-License-Identifier: Apache-2.0
#include "policy/session_watch.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/errors.h"

namespace dsh::sandbox::policy {

namespace {

// Narrow to wide, as the modes' promise grows: what a mode allows, every wider one allows too.
int rank(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kReadOnly:
      return 0;
    case SandboxMode::kWorkspaceWrite:
      return 1;
    case SandboxMode::kDangerFullAccess:
      return 2;
  }
  return 0;
}

bool narrower(SandboxMode a, SandboxMode b) { return rank(a) < rank(b); }

std::string canonical(const std::string& path) {
  std::array<char, PATH_MAX> resolved{};
  return ::realpath(path.c_str(), resolved.data()) != nullptr ? resolved.data() : path;
}

// An appended line is one write(2); a reader racing it may still see part of it. A log that
// does not parse is read again after a pause before it counts as corrupt.
constexpr int kReadAttempts = 3;
constexpr std::chrono::milliseconds kReadPause{60};

}  // namespace

SessionStart session_start(const SessionLog& log, SandboxMode default_mode) {
  const std::vector<SandboxModeEvent> events = log.sandbox_mode_events();
  return {events.size(), effective_sandbox_mode(events).value_or(default_mode)};
}

SessionNews judge_session_events(const std::vector<SandboxModeEvent>& events, SandboxMode running,
                                 SessionStart& seen) {
  if (events.size() < seen.events) {
    return {SessionNews::Kind::kUnreadable, running,
            fmt::format("it holds {} sandbox/mode events where it held {}: it was rewritten",
                        events.size(), seen.events)};
  }
  const SandboxMode before = seen.mode;
  const bool fresh = events.size() > seen.events;
  for (std::size_t i = seen.events; i < events.size(); ++i) {
    const SandboxMode mode = events[i].mode;
    if (narrower(mode, seen.mode) && narrower(mode, running)) {
      seen.events = i + 1;
      seen.mode = mode;
      return {SessionNews::Kind::kNarrowed, mode, {}};
    }
    seen.mode = mode;
  }
  seen.events = events.size();
  // Said once per change: the tree keeps its own mode, a new one gets the wider.
  if (fresh && seen.mode != before && narrower(running, seen.mode)) {
    return {SessionNews::Kind::kWidened, seen.mode, {}};
  }
  return {};
}

SessionWatch::SessionWatch(const SessionLog& log, SandboxMode running, SessionStart start)
    : path_(canonical(log.path())),
      id_(log.id()),
      cwd_(log.cwd()),
      running_(running),
      seen_(start) {
  log_.emplace(SessionLog::open(path_, log.options()));
  struct stat info {};
  if (::lstat(path_.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    throw InvalidSandboxInputError(
        fmt::format("session log {}: it is no regular file any more", text::quoted(path_)));
  }
  device_ = info.st_dev;
  inode_ = info.st_ino;
  inotify_ = UniqueFd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  // Every change of the file's bytes or links: an append, a truncation, an unlink or a rename
  // over it (the old file's link count drops: IN_ATTRIB).
  constexpr std::uint32_t kEvents =
      IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW;
  if (inotify_.get() >= 0 && ::inotify_add_watch(inotify_.get(), path_.c_str(), kEvents) < 0) {
    inotify_.reset();
  }
}

std::optional<std::string> SessionWatch::replaced() const {
  struct stat info {};
  if (::lstat(path_.c_str(), &info) != 0) {
    return fmt::format("it cannot be found any more ({})", std::generic_category().message(errno));
  }
  if (S_ISLNK(info.st_mode)) return std::string("it was replaced by a symlink");
  if (!S_ISREG(info.st_mode)) return std::string("it was replaced by something not a file");
  if (info.st_dev != device_ || info.st_ino != inode_) {
    return std::string("it was replaced by another file");
  }
  return std::nullopt;
}

SessionNews SessionWatch::read_events() {
  std::string problem;
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kReadPause);
    if (auto why = replaced()) return {SessionNews::Kind::kUnreadable, running_, *why};
    try {
      const std::vector<SandboxModeEvent> events = log_->sandbox_mode_events();
      if (log_->id() != id_ || log_->cwd() != cwd_) {
        return {SessionNews::Kind::kUnreadable, running_, "its header names another session"};
      }
      // Read by name: the name must still be the file judged, not one swapped in meanwhile.
      if (auto why = replaced()) return {SessionNews::Kind::kUnreadable, running_, *why};
      return judge_session_events(events, running_, seen_);
    } catch (const std::exception& error) {
      problem = error.what();
    }
  }
  return {SessionNews::Kind::kUnreadable, running_, problem};
}

SessionNews SessionWatch::check() {
  if (final_) return *final_;
  if (inotify_.get() >= 0) {
    std::array<char, 4096> drained{};
    while (::read(inotify_.get(), drained.data(), drained.size()) > 0) {
    }
  }
  SessionNews news = read_events();
  if (news.ends()) final_ = news;
  return news;
}

std::string session_news_text(const SessionNews& news, SandboxMode running, std::string_view what) {
  switch (news.kind) {
    case SessionNews::Kind::kNarrowed:
      return fmt::format(
          "the session's mode changed to {0}; this {1} ran under {2} and was ended; start a new "
          "{1} to work under {0}",
          wire_name(news.mode), what, wire_name(running));
    case SessionNews::Kind::kWidened:
      return fmt::format(
          "the session's mode changed to {0}; this {1} keeps running under {2}; a new {1} gets "
          "{0}",
          wire_name(news.mode), what, wire_name(running));
    case SessionNews::Kind::kUnreadable:
      return fmt::format(
          "the session log can no longer be read as this session's ({}); this {} ran under {} "
          "and was ended, as the sandbox fails closed",
          news.detail, what, wire_name(running));
    case SessionNews::Kind::kNone:
      break;
  }
  return {};
}

}  // namespace dsh::sandbox::policy
