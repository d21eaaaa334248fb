// SPDX-License-Identifier: Apache-2.0
// What a running shell or job of a session is held to: the judgement of the session's mode
// events after its start, and the watch that rereads the log (appends, a symlink or another file
// in its place, a corrupt line, fewer events, its removal).
#include "policy/session_watch.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_dir.h"

namespace dsh::sandbox::policy {
namespace {

using dsh::testing::TempDir;
using Kind = SessionNews::Kind;
constexpr SandboxMode kRo = SandboxMode::kReadOnly;
constexpr SandboxMode kWw = SandboxMode::kWorkspaceWrite;
constexpr SandboxMode kFull = SandboxMode::kDangerFullAccess;

std::vector<SandboxModeEvent> events(std::initializer_list<SandboxMode> modes) {
  std::vector<SandboxModeEvent> out;
  for (const SandboxMode mode : modes) out.push_back({mode, false});
  return out;
}

TEST(JudgeSessionEvents, ANarrowingBelowTheTreesModeEndsIt) {
  SessionStart seen{1, kWw};
  EXPECT_EQ(judge_session_events(events({kWw}), kWw, seen).kind, Kind::kNone);
  const SessionNews news = judge_session_events(events({kWw, kRo}), kWw, seen);
  EXPECT_EQ(news.kind, Kind::kNarrowed);
  EXPECT_EQ(news.mode, kRo);
  EXPECT_TRUE(news.ends());
}

TEST(JudgeSessionEvents, ANarrowingUndoneBeforeTheCheckStillEndsIt) {
  SessionStart seen{0, kWw};
  EXPECT_EQ(judge_session_events(events({kRo, kWw}), kWw, seen).kind, Kind::kNarrowed);
}

TEST(JudgeSessionEvents, AWideningLeavesTheTreeAndIsSaidOnce) {
  SessionStart seen{1, kRo};
  const SessionNews news = judge_session_events(events({kRo, kWw}), kRo, seen);
  EXPECT_EQ(news.kind, Kind::kWidened);
  EXPECT_EQ(news.mode, kWw);
  EXPECT_FALSE(news.ends());
  EXPECT_EQ(judge_session_events(events({kRo, kWw}), kRo, seen).kind, Kind::kNone);
  // The same mode switched again is no change.
  EXPECT_EQ(judge_session_events(events({kRo, kWw, kWw}), kRo, seen).kind, Kind::kNone);
}

// A tree under an approved wider mode than its session's is not ended for that; a later switch
// that narrows the session below its mode ends it.
TEST(JudgeSessionEvents, AGrantOutlivesTheSessionsModeButNotALaterNarrowing) {
  SessionStart seen{1, kRo};
  EXPECT_EQ(judge_session_events(events({kRo, kRo}), kWw, seen).kind, Kind::kNone);
  EXPECT_EQ(judge_session_events(events({kRo, kRo, kWw}), kWw, seen).kind, Kind::kNone);
  EXPECT_EQ(judge_session_events(events({kRo, kRo, kWw, kRo}), kWw, seen).kind, Kind::kNarrowed);

  SessionStart granted{1, kWw};
  EXPECT_EQ(judge_session_events(events({kWw, kRo}), kFull, granted).kind, Kind::kNarrowed);
}

// A narrowing to a mode the tree already runs under (or below) leaves it: it asks no more than
// the session still allows.
TEST(JudgeSessionEvents, ANarrowingToTheTreesOwnModeLeavesIt) {
  SessionStart seen{1, kFull};
  EXPECT_EQ(judge_session_events(events({kFull, kWw}), kWw, seen).kind, Kind::kNone);
  EXPECT_EQ(judge_session_events(events({kFull, kWw, kRo}), kWw, seen).kind, Kind::kNarrowed);
}

TEST(JudgeSessionEvents, FewerEventsThanSeenIsARewrite) {
  SessionStart seen{2, kWw};
  const SessionNews news = judge_session_events(events({kWw}), kWw, seen);
  EXPECT_EQ(news.kind, Kind::kUnreadable);
  EXPECT_NE(news.detail.find("rewritten"), std::string::npos) << news.detail;
}

class SessionWatchFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/s.jsonl";
    log_.emplace(SessionLog::create(path_, "s", dir_.path()));
    set_sandbox_mode(*log_, kWw);
  }

  void append(const std::string& line) const {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << line;
  }

  SessionWatch watch(SandboxMode running = kWw) const {
    return SessionWatch(*log_, running, session_start(*log_, kRo));
  }

  TempDir dir_;
  std::string path_;
  std::optional<SessionLog> log_;
};

TEST_F(SessionWatchFile, AnAppendedSwitchIsSeenThroughInotify) {
  SessionWatch watch = this->watch();
  ASSERT_GE(watch.fd(), 0);
  EXPECT_EQ(watch.check().kind, Kind::kNone);
  set_sandbox_mode(*log_, kRo);
  pollfd ready{watch.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&ready, 1, 5000), 1);
  const SessionNews news = watch.check();
  EXPECT_EQ(news.kind, Kind::kNarrowed);
  EXPECT_EQ(session_news_text(news, kWw, "shell"),
            "the session's mode changed to read-only; this shell ran under workspace-write and "
            "was ended; start a new shell to work under read-only");
  // Ended stays ended, whatever the log says later.
  set_sandbox_mode(*log_, kWw);
  EXPECT_EQ(watch.check().kind, Kind::kNarrowed);
}

TEST_F(SessionWatchFile, ASymlinkInItsPlaceEndsTheTree) {
  SessionWatch watch = this->watch();
  const std::string copy = dir_.path() + "/copy.jsonl";
  std::filesystem::copy_file(path_, copy);
  const std::string link = dir_.path() + "/link";
  ASSERT_EQ(::symlink(copy.c_str(), link.c_str()), 0);
  ASSERT_EQ(::rename(link.c_str(), path_.c_str()), 0);
  const SessionNews news = watch.check();
  EXPECT_EQ(news.kind, Kind::kUnreadable);
  EXPECT_EQ(news.detail, "it was replaced by a symlink");
  EXPECT_NE(session_news_text(news, kWw, "job")
                .find("this job ran under workspace-write and "
                      "was ended, as the sandbox fails closed"),
            std::string::npos);
}

TEST_F(SessionWatchFile, AnotherFileInItsPlaceEndsTheTree) {
  SessionWatch watch = this->watch();
  const std::string copy = dir_.path() + "/copy.jsonl";
  std::filesystem::copy_file(path_, copy);
  ASSERT_EQ(::rename(copy.c_str(), path_.c_str()), 0);
  EXPECT_EQ(watch.check().detail, "it was replaced by another file");
}

TEST_F(SessionWatchFile, ACorruptLineEndsTheTree) {
  SessionWatch watch = this->watch();
  append("not json\n");
  const SessionNews news = watch.check();
  EXPECT_EQ(news.kind, Kind::kUnreadable);
  EXPECT_NE(news.detail.find("line 3"), std::string::npos) << news.detail;
}

TEST_F(SessionWatchFile, ItsRemovalEndsTheTree) {
  SessionWatch watch = this->watch();
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  const SessionNews news = watch.check();
  EXPECT_EQ(news.kind, Kind::kUnreadable);
  EXPECT_NE(news.detail.find("cannot be found"), std::string::npos) << news.detail;
}

TEST_F(SessionWatchFile, OtherEventsChangeNothing) {
  SessionWatch watch = this->watch();
  append(R"({"type":"harness/note","payload":{}})"
         "\n");
  EXPECT_EQ(watch.check().kind, Kind::kNone);
}

}  // namespace
}  // namespace dsh::sandbox::policy
