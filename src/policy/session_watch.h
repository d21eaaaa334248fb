// SPDX-License-Identifier: Apache-2.0
// A shell or a background job of a session runs only as long as the session still allows what
// it was started with. Its supervisor holds a SessionWatch: an inotify watch on the session's log
// (and a short poll besides), and a check that rereads the log the trusted way every call reads
// it. The tree must end when a sandbox/mode event narrows the session below the mode the tree
// runs under, and, failing closed, when the log can no longer be read as the same session: it
// was removed, replaced (by a symlink, another file), rewritten with fewer events, or made
// unparsable. A widening switch changes nothing for a running tree: it keeps its narrower mode.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/policy_service.h"

namespace dsh::sandbox::policy {

// The session as the call that started the tree resolved it: how many sandbox/mode events its
// log held, and the session's mode then (the last event's, else the configured default).
// Taken before the call's policy is resolved, so that no switch falls between the two unseen.
struct SessionStart {
  std::size_t events = 0;
  SandboxMode mode = SandboxMode::kReadOnly;
};
SessionStart session_start(const SessionLog& log, SandboxMode default_mode);

// What one check found.
struct SessionNews {
  enum class Kind {
    kNone,        // nothing that matters to the tree
    kWidened,     // the session's mode is now wider than the tree's; the tree keeps its own
    kNarrowed,    // a switch made the session narrower than the tree's mode: end the tree
    kUnreadable,  // the log is gone, replaced or unparsable: end the tree (fail closed)
  };
  Kind kind = Kind::kNone;
  SandboxMode mode = SandboxMode::kReadOnly;  // the session's new mode (widened, narrowed)
  std::string detail;                         // unreadable: why

  bool ends() const { return kind == Kind::kNarrowed || kind == Kind::kUnreadable; }
};

// The judgement, pure: `events` is the log's sandbox/mode events now, `running` the tree's mode,
// `start` what the call saw, `seen` how far an earlier check got (updated). Every event after
// the ones already judged counts, in order, so a narrowing undone before a check still ends the
// tree: an event narrows when its mode is narrower than the session's mode before it and
// narrower than `running`. A tree started under an approved wider mode (a per-call --mode) than
// its session's is therefore not ended for the session being narrower from the start, only
// for a later switch that narrows the session below the tree's mode.
SessionNews judge_session_events(const std::vector<SandboxModeEvent>& events, SandboxMode running,
                                 SessionStart& seen);

class SessionWatch {
 public:
  // Watches `log` (opened as the call opened it, with its trust roots) at its canonical path,
  // the file it is now; InvalidSandboxInputError when it cannot be opened so. Without inotify it
  // polls alone.
  SessionWatch(const SessionLog& log, SandboxMode running, SessionStart start);

  // Readable when the log may have changed (-1 without inotify); check() drains it.
  int fd() const { return inotify_.get(); }
  // How long to wait at most between two checks.
  static constexpr std::chrono::milliseconds kPollInterval{500};

  // Rereads the log: the news since the last check. After news that ends the tree, the same
  // news again.
  SessionNews check();

  const std::string& path() const { return path_; }
  SandboxMode running() const { return running_; }

 private:
  std::optional<std::string> replaced() const;  // why the path no longer names the log
  SessionNews read_events();

  std::string path_;  // canonical
  std::optional<SessionLog> log_;
  std::string id_;
  std::optional<std::string> cwd_;
  SandboxMode running_;
  SessionStart seen_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  UniqueFd inotify_;
  std::optional<SessionNews> final_;
};

// The line a person reads when the tree ended (or, widened, keeps running), for `what` ("shell",
// "job"): "the session's mode changed to read-only; this shell ran under workspace-write and was
// ended; start a new shell to work under read-only".
std::string session_news_text(const SessionNews& news, SandboxMode running, std::string_view what);

}  // namespace dsh::sandbox::policy
