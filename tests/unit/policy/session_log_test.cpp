// SPDX-License-Identifier: Apache-2.0
// The session log: its format, the fold, the one write path, delegation, and
// malformed files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsh/sandbox/policy_service.h"
#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

using dsh::testing::TempDir;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_all(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The InvalidSandboxInputError message opening `path`, or "" when it opened.
std::string open_error(const std::string& path) {
  try {
    const SessionLog log = SessionLog::open(path);
    log.sandbox_mode_events();
  } catch (const InvalidSandboxInputError& error) {
    return error.what();
  }
  return {};
}

constexpr std::string_view kHeader = R"({"type":"session","version":1,"id":"s","cwd":"/ws"})"
                                     "\n";

class SessionLogTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name = "session.jsonl") const { return dir_ / name; }

  // The open error for a log of `text`, checked to name the file and the line.
  std::string malformed(std::string_view text, int line) {
    write_all(path(), text);
    const std::string message = open_error(path());
    EXPECT_NE(message.find("session log \"" + path() + "\""), std::string::npos) << message;
    EXPECT_NE(message.find("line " + std::to_string(line) + ":"), std::string::npos) << message;
    return message;
  }

  TempDir dir_;
};

TEST_F(SessionLogTest, CreateWritesTheHeaderLine) {
  const SessionLog log = SessionLog::create(path(), "s-1", "/work/ws");
  EXPECT_EQ(read_all(path()), R"({"cwd":"/work/ws","id":"s-1","type":"session","version":1})"
                              "\n");
  EXPECT_EQ(log.id(), "s-1");
  EXPECT_EQ(log.cwd(), "/work/ws");
  EXPECT_EQ(log.path(), path());
  EXPECT_TRUE(log.sandbox_mode_events().empty());
  struct stat info {};
  ASSERT_EQ(::stat(path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
}

TEST_F(SessionLogTest, AHeaderWithoutCwdOmitsIt) {
  const SessionLog log = SessionLog::create(path(), "s-1");
  EXPECT_EQ(read_all(path()), R"({"id":"s-1","type":"session","version":1})"
                              "\n");
  EXPECT_EQ(SessionLog::open(path()).cwd(), std::nullopt);
}

TEST_F(SessionLogTest, SetSandboxModeAppendsExactlyOneEvent) {
  const SessionLog log = SessionLog::create(path(), "s", "/ws");
  const std::string before = read_all(path());
  set_sandbox_mode(log, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(read_all(path()), before +
                                  R"({"payload":{"mode":"workspace-write"},"type":"sandbox/mode"})"
                                  "\n");
  set_sandbox_mode(log, SandboxMode::kDangerFullAccess);
  EXPECT_EQ(log.sandbox_mode_events(),
            (std::vector<SandboxModeEvent>{{SandboxMode::kWorkspaceWrite, false},
                                           {SandboxMode::kDangerFullAccess, false}}));
}

TEST_F(SessionLogTest, TheFoldReturnsTheLastEvent) {
  EXPECT_EQ(effective_sandbox_mode({}), std::nullopt);
  EXPECT_EQ(effective_sandbox_mode({{SandboxMode::kDangerFullAccess, false},
                                    {SandboxMode::kReadOnly, true},
                                    {SandboxMode::kWorkspaceWrite, false}}),
            SandboxMode::kWorkspaceWrite);
}

TEST_F(SessionLogTest, DelegationSeedsTheChildWithTheParentsOverrideTagged) {
  const SessionLog parent = SessionLog::create(path("parent.jsonl"), "parent", "/ws");
  const SessionLog child = SessionLog::create(path("child.jsonl"), "child", "/ws");
  set_sandbox_mode(parent, SandboxMode::kReadOnly);
  EXPECT_EQ(delegate_sandbox_mode(parent, child), SandboxMode::kReadOnly);
  EXPECT_EQ(child.sandbox_mode_events(),
            (std::vector<SandboxModeEvent>{{SandboxMode::kReadOnly, true}}));
  const std::string text = read_all(child.path());
  EXPECT_NE(
      text.find(R"({"payload":{"mode":"read-only","source":"delegation"},"type":"sandbox/mode"})"
                "\n"),
      std::string::npos)
      << text;
  // The seeded override outranks a wider default in the child.
  EXPECT_EQ(SandboxPolicyService({.mode = "danger-full-access"}).resolve({.session = &child}).mode,
            SandboxMode::kReadOnly);
}

TEST_F(SessionLogTest, DelegationWithoutAParentOverrideWritesNothing) {
  const SessionLog parent = SessionLog::create(path("parent.jsonl"), "parent");
  const SessionLog child = SessionLog::create(path("child.jsonl"), "child");
  const std::string before = read_all(child.path());
  EXPECT_EQ(delegate_sandbox_mode(parent, child), std::nullopt);
  EXPECT_EQ(read_all(child.path()), before);
}

TEST_F(SessionLogTest, EventsOfOtherTypesAreSkipped) {
  write_all(path(), std::string(kHeader) +
                        R"({"type":"message","payload":{"text":"hi"}})"
                        "\n"
                        R"({"type":"sandbox/mode","payload":{"mode":"workspace-write"}})"
                        "\n"
                        R"({"type":"tool/result","payload":{}})"
                        "\n");
  EXPECT_EQ(SessionLog::open(path()).sandbox_mode_events(),
            (std::vector<SandboxModeEvent>{{SandboxMode::kWorkspaceWrite, false}}));
}

TEST_F(SessionLogTest, CreateRefusesAnExistingFile) {
  write_all(path(), kHeader);
  EXPECT_THROW(SessionLog::create(path(), "s", "/ws"), InvalidSandboxInputError);
  EXPECT_EQ(read_all(path()), kHeader);
}

TEST_F(SessionLogTest, CreateRefusesBadHeaders) {
  EXPECT_THROW(SessionLog::create(path("a"), "", "/ws"), InvalidSandboxInputError);
  EXPECT_THROW(SessionLog::create(path("b"), std::string("s\0t", 3), "/ws"),
               InvalidSandboxInputError);
  EXPECT_THROW(SessionLog::create(path("c"), "s", "relative/ws"), InvalidSandboxInputError);
  EXPECT_THROW(SessionLog::create(path("d"), "s", ""), InvalidSandboxInputError);
  EXPECT_THROW(SessionLog::create(path("e"), "s", std::string("/ws\0/x", 6)),
               InvalidSandboxInputError);
  EXPECT_THROW(SessionLog::create(std::string("/tmp/x\0y", 8), "s"), InvalidSandboxInputError);
  EXPECT_THROW(SessionLog::create("", "s"), InvalidSandboxInputError);
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    EXPECT_FALSE(std::filesystem::exists(path(name))) << name;  // nothing half-created
  }
}

TEST_F(SessionLogTest, ARelativeCwdMessageSaysWhatToFix) {
  try {
    SessionLog::create(path(), "s", "ws");
    FAIL();
  } catch (const InvalidSandboxInputError& error) {
    EXPECT_STREQ(error.what(),
                 "session cwd \"ws\" is not an absolute path; record the absolute directory the "
                 "session works in");
  }
}

TEST_F(SessionLogTest, OpeningAMissingFileNamesIt) {
  const std::string message = open_error(path("missing.jsonl"));
  EXPECT_NE(message.find(path("missing.jsonl")), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST_F(SessionLogTest, AnUnknownModeIsRejectedWithTheReferenceText) {
  const std::string message =
      malformed(std::string(kHeader) + R"({"type":"sandbox/mode","payload":{"mode":"yolo"}})"
                                       "\n",
                2);
  EXPECT_TRUE(message.ends_with(R"(line 2: sandbox/mode carries unknown mode "yolo")")) << message;
}

TEST_F(SessionLogTest, ANonStringModeIsShownAsJson) {
  EXPECT_TRUE(malformed(std::string(kHeader) + R"({"type":"sandbox/mode","payload":{"mode":5}})"
                                               "\n",
                        2)
                  .ends_with("sandbox/mode carries unknown mode 5"));
  EXPECT_TRUE(malformed(std::string(kHeader) + R"({"type":"sandbox/mode","payload":{}})"
                                               "\n",
                        2)
                  .ends_with("sandbox/mode carries unknown mode null"));
}

TEST_F(SessionLogTest, AnUnknownModeAfterValidOnesStillFailsClosed) {
  write_all(path(), std::string(kHeader) +
                        R"({"type":"sandbox/mode","payload":{"mode":"read-only"}})"
                        "\n");
  const SessionLog log = SessionLog::open(path());
  std::ofstream(path(), std::ios::app) << R"({"type":"sandbox/mode","payload":{"mode":"YOLO"}})"
                                       << "\n";
  EXPECT_THROW(SandboxPolicyService().resolve({.session = &log}), InvalidSandboxInputError);
}

TEST_F(SessionLogTest, AnUnknownSourceIsRejected) {
  const std::string message =
      malformed(std::string(kHeader) +
                    R"({"type":"sandbox/mode","payload":{"mode":"read-only","source":"user"}})"
                    "\n",
                2);
  EXPECT_NE(message.find(R"(unknown source "user")"), std::string::npos) << message;
}

TEST_F(SessionLogTest, MalformedLinesNameTheFileAndTheLine) {
  const std::string header(kHeader);
  malformed(header + "not json\n", 2);
  malformed(header + "[1,2]\n", 2);
  malformed(header + R"({"payload":{}})"
                     "\n",
            2);
  malformed(header + R"({"type":7})"
                     "\n",
            2);
  malformed(header + "\n", 2);
  malformed(header + R"({"type":"sandbox/mode","payload":"read-only"})"
                     "\n",
            2);
  malformed(header + R"({"type":"sandbox/mode"})"
                     "\n",
            2);
  malformed(header + R"({"type":"sandbox/mode","payload":{"mode":"read-only"}})", 2);
  malformed(header + header, 2);
  malformed(header + R"({"type":"x"})"
                     "\n"
                     R"({"type":"sandbox/mode","payload":{"mode":"read-only"}}{)"
                     "\n",
            3);
}

TEST_F(SessionLogTest, AnUnterminatedLineIsCalledOut) {
  EXPECT_NE(malformed(std::string(kHeader) + R"({"type":"x"})", 2).find("not terminated"),
            std::string::npos);
}

TEST_F(SessionLogTest, BadHeadersAreRejected) {
  malformed(R"({"type":"sandbox/mode","payload":{"mode":"read-only"}})"
            "\n",
            1);
  malformed(R"({"type":"session","version":2,"id":"s"})"
            "\n",
            1);
  malformed(R"({"type":"session","id":"s"})"
            "\n",
            1);
  malformed(R"({"type":"session","version":1})"
            "\n",
            1);
  malformed(R"({"type":"session","version":1,"id":""})"
            "\n",
            1);
  malformed(R"({"type":"session","version":1,"id":"s","cwd":"ws"})"
            "\n",
            1);
  malformed(R"({"type":"session","version":1,"id":"s","cwd":7})"
            "\n",
            1);
  const std::string nul = malformed(R"({"type":"session","version":1,"id":"s","cwd":"/ws\u0000x"})"
                                    "\n",
                                    1);
  EXPECT_NE(nul.find("NUL"), std::string::npos) << nul;
}

TEST_F(SessionLogTest, AnEmptyFileHasNoHeader) {
  write_all(path(), "");
  EXPECT_NE(open_error(path()).find("empty"), std::string::npos);
}

TEST_F(SessionLogTest, AReplacedFileIsNotTheSameSession) {
  const SessionLog log = SessionLog::create(path(), "s", "/ws");
  write_all(path(), R"({"type":"session","version":1,"id":"other","cwd":"/ws"})"
                    "\n");
  EXPECT_THROW(log.sandbox_mode_events(), InvalidSandboxInputError);
}

TEST_F(SessionLogTest, AppendingToAVanishedLogFailsWithoutRecreatingIt) {
  const SessionLog log = SessionLog::create(path(), "s", "/ws");
  std::filesystem::remove(path());
  EXPECT_THROW(set_sandbox_mode(log, SandboxMode::kWorkspaceWrite), std::system_error);
  EXPECT_FALSE(std::filesystem::exists(path()));
}

TEST_F(SessionLogTest, FsyncIsAnOption) {
  const SessionLog log = SessionLog::create(path(), "s", "/ws", {.fsync = true});
  set_sandbox_mode(log, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(SessionLog::open(path(), {.fsync = true}).sandbox_mode_events().size(), 1U);
}

// The audit trail: one line per run, and the workspaces the session's confined runs could write.
TEST_F(SessionLogTest, RunsAndRefusalsAreRecordedAndWrittenWorkspacesAreKnown) {
  const SessionLog log = SessionLog::create(path(), "s", "/ws");
  SandboxRunEvent run;
  run.argv = {"bash", "-c", "make"};
  run.mode = SandboxMode::kWorkspaceWrite;
  run.workspace_root = "/ws/sub";
  run.backend = "bwrap+landlock";
  run.enforcement = "full";
  run.exit_code = 1;
  run.denied = true;
  run.denial = "[sandbox: file access denied under workspace-write mode]";
  record_run(log, run);
  SandboxRunEvent read_only = run;
  read_only.mode = SandboxMode::kReadOnly;
  read_only.workspace_root = "/elsewhere";
  record_run(log, read_only);
  record_refusal(log, {{"true"}, SandboxMode::kReadOnly, "/ws", "SANDBOX_UNAVAILABLE", "no"});
  const std::string text = read_all(path());
  EXPECT_NE(text.find(R"({"payload":{"argv":["bash","-c","make"],"backend":"bwrap+landlock",)"
                      R"("denial":"[sandbox: file access denied under workspace-write mode]",)"
                      R"("denialCount":0,"denialSource":null,"denials":[],)"
                      R"("denied":true,"enforcement":"full","exitCode":1,)"
                      R"("mode":"workspace-write","signal":null,"timedOut":false,)"
                      R"("workspace":"/ws/sub"},"type":"sandbox/run"})"
                      "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("code":"SANDBOX_UNAVAILABLE","mode":"read-only","reason":"no")"),
            std::string::npos)
      << text;
  // The cwd and every workspace-write run's workspace; a read-only run wrote nothing.
  EXPECT_EQ(log.written_workspaces(), (std::vector<std::string>{"/ws", "/ws/sub"}));
  EXPECT_TRUE(log.sandbox_mode_events().empty());  // audit lines never change the mode
}

// With untrusted roots, a log beneath one is refused on open, create and append, naming the fix.
TEST_F(SessionLogTest, ALogBeneathAnUntrustedRootIsRefused) {
  dsh::testing::TempDir dir;  // outside /tmp
  const std::string inside = dir / "session.jsonl";
  const SessionLog made = SessionLog::create(inside, "s", dir.path());
  const std::vector<std::string> roots = {dir.path()};
  const SessionLogOptions guarded{false, roots};
  try {
    (void)SessionLog::open(inside, guarded);
    FAIL() << "a log inside a writable root must be refused";
  } catch (const InvalidSandboxInputError& error) {
    EXPECT_NE(std::string(error.what()).find("Keep the session log outside the workspace"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)SessionLog::create(dir / "other.jsonl", "s", dir.path(), guarded),
               InvalidSandboxInputError);
  // Outside every root it opens, reads and appends as before.
  const SessionLogOptions elsewhere{false, std::vector<std::string>{"/nonexistent-root"}};
  const SessionLog trusted = SessionLog::open(inside, elsewhere);
  set_sandbox_mode(trusted, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(trusted.sandbox_mode_events().size(), 1U);
}

}  // namespace
}  // namespace dsh::sandbox
