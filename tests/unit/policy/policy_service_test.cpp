// SPDX-License-Identifier: Apache-2.0
// SandboxPolicyService: precedence, roots, texts.
#include "dsh/sandbox/policy_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "dsh/sandbox/roots.h"
#include "paths.h"
#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

namespace fs = std::filesystem;
using dsh::testing::CwdGuard;
using dsh::testing::native_realpath;
using dsh::testing::ScopedEnv;
using dsh::testing::TempDir;

constexpr std::string_view kReadOnlyText =
    "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox "
    "cannot modify files in the standing mode. Do not refuse a required modification from this "
    "policy alone: try an available tool normally and follow any denial and escalation guidance "
    "it returns.";
constexpr std::string_view kDangerText =
    "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file "
    "modifications by available operations.";

std::string workspace_write_text(std::string_view quoted_root) {
  return "Current DSH file policy: workspace-write. Any available operation enforced by the DSH "
         "file sandbox may modify files under the session workspace: " +
         std::string(quoted_root) + ". Some platform temporary areas may also be writable.";
}

class PolicyServiceTest : public ::testing::Test {
 protected:
  SessionLog session(const std::string& name, std::optional<std::string> cwd) {
    return SessionLog::create(dir_ / (name + ".jsonl"), name, std::move(cwd));
  }
  std::string workspace(const std::string& name) {
    fs::create_directories(dir_ / name);
    return native_realpath(dir_ / name);
  }

  TempDir dir_;
};

TEST_F(PolicyServiceTest, DefaultIsReadOnlyAtTheWorkingDirectory) {
  const CwdGuard cwd(dir_.path());
  const SandboxPolicyService service;
  EXPECT_EQ(service.default_mode(), SandboxMode::kReadOnly);
  const SandboxExecutionPolicy policy = service.resolve();
  EXPECT_EQ(policy.mode, SandboxMode::kReadOnly);
  EXPECT_EQ(policy.workspace_root, native_realpath(dir_.path()));
  EXPECT_FALSE(policy.session_id.has_value());
}

TEST_F(PolicyServiceTest, TheWorkingDirectoryIsTakenAtConstruction) {
  const std::string first = workspace("first");
  std::optional<SandboxPolicyService> service;
  {
    const CwdGuard cwd(first);
    service.emplace();
  }
  EXPECT_EQ(service->resolve().workspace_root, first);
}

TEST_F(PolicyServiceTest, AConfiguredRootIsNormalizedLexicallyWhenMissing) {
  const SandboxPolicyService service(
      {.mode = "workspace-write", .workspace_root = "/ws/../ws/./sub"});
  const SandboxExecutionPolicy policy = service.resolve();
  EXPECT_EQ(policy.workspace_root, "/ws/sub");
  EXPECT_EQ(policy.mode, SandboxMode::kWorkspaceWrite);
}

TEST_F(PolicyServiceTest, ARelativeConfiguredRootResolvesAgainstTheWorkingDirectory) {
  const std::string ws = workspace("ws");
  const CwdGuard cwd(dir_.path());
  EXPECT_EQ(SandboxPolicyService({.workspace_root = "ws"}).workspace_root(), ws);
}

TEST_F(PolicyServiceTest, AgentlessResolveHasNoSessionId) {
  const SandboxPolicyService service({.workspace_root = "/ws"});
  EXPECT_EQ(service.resolve({}),
            (SandboxExecutionPolicy{SandboxMode::kReadOnly, "/ws", std::nullopt}));
  EXPECT_EQ(service.resolve({.mode = SandboxMode::kDangerFullAccess}),
            (SandboxExecutionPolicy{SandboxMode::kDangerFullAccess, "/ws", std::nullopt}));
}

TEST_F(PolicyServiceTest, SessionsResolveModeAndRootTogetherAndIndependently) {
  const SandboxPolicyService service({.workspace_root = "/fallback"});
  const std::string ws_a = workspace("a");
  const std::string ws_b = workspace("b");
  const SessionLog a = session("a", ws_a);
  const SessionLog b = session("b", ws_b);
  set_sandbox_mode(a, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(service.resolve({.session = &a}),
            (SandboxExecutionPolicy{SandboxMode::kWorkspaceWrite, ws_a, "a"}));
  EXPECT_EQ(service.resolve({.session = &b}),
            (SandboxExecutionPolicy{SandboxMode::kReadOnly, ws_b, "b"}));
  set_sandbox_mode(b, SandboxMode::kDangerFullAccess);
  EXPECT_EQ(service.resolve({.session = &a}).mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(service.resolve({.session = &b}).mode, SandboxMode::kDangerFullAccess);
  EXPECT_EQ(service.resolve().workspace_root, "/fallback");
}

// `<root>/lexical/link/..` with link -> <root>/physical/child is realpath(<root>/physical),
// where chdir lands, never the lexical <root>/lexical.
TEST_F(PolicyServiceTest, ASymlinkParentResolvesRealpathFirst) {
  fs::create_directories(dir_ / "physical/child");
  fs::create_directories(dir_ / "lexical");
  fs::create_symlink(dir_ / "physical/child", dir_ / "lexical/link");
  const std::string spelled = dir_ / "lexical/link/..";
  const std::string expected = native_realpath(dir_ / "physical");
  ASSERT_NE(expected, native_realpath(dir_ / "lexical"));

  const SandboxPolicyService service({.workspace_root = spelled});
  EXPECT_EQ(service.workspace_root(), expected);
  const SessionLog s = session("s", spelled);
  EXPECT_EQ(s.cwd(), spelled);  // recorded as spelled; resolved at each resolve
  EXPECT_EQ(SandboxPolicyService({.workspace_root = "/elsewhere"})
                .resolve({.session = &s})
                .workspace_root,
            expected);
}

TEST_F(PolicyServiceTest, AnApprovedModeOutranksTheSessionAndKeepsTheRoot) {
  const SandboxPolicyService service({.mode = "workspace-write", .workspace_root = "/fallback"});
  const std::string ws = workspace("ws");
  const SessionLog s = session("s", ws);
  set_sandbox_mode(s, SandboxMode::kReadOnly);
  EXPECT_EQ(service.resolve({.session = &s, .mode = SandboxMode::kDangerFullAccess}),
            (SandboxExecutionPolicy{SandboxMode::kDangerFullAccess, ws, "s"}));
  // The grant was for that call only: nothing was written, the session still reads read-only.
  EXPECT_EQ(service.resolve({.session = &s}).mode, SandboxMode::kReadOnly);
  EXPECT_EQ(s.sandbox_mode_events().size(), 1U);
}

TEST_F(PolicyServiceTest, TheSessionOutranksTheDefault) {
  const SandboxPolicyService service({.mode = "danger-full-access"});
  const SessionLog s = session("s", workspace("ws"));
  EXPECT_EQ(service.resolve({.session = &s}).mode, SandboxMode::kDangerFullAccess);
  set_sandbox_mode(s, SandboxMode::kReadOnly);
  EXPECT_EQ(service.resolve({.session = &s}).mode, SandboxMode::kReadOnly);
}

TEST_F(PolicyServiceTest, ASessionWithoutCwdUsesTheConfiguredRoot) {
  const SandboxPolicyService service({.workspace_root = "/ws/./fallback"});
  const SessionLog s = session("no-cwd", std::nullopt);
  EXPECT_EQ(service.resolve({.session = &s}),
            (SandboxExecutionPolicy{SandboxMode::kReadOnly, "/ws/fallback", "no-cwd"}));
}

TEST_F(PolicyServiceTest, OverrideOfIsTheFoldWithoutTheDefault) {
  const SandboxPolicyService service({.mode = "workspace-write"});
  const SessionLog s = session("s", std::nullopt);
  EXPECT_EQ(service.override_of(s), std::nullopt);
  set_sandbox_mode(s, SandboxMode::kReadOnly);
  EXPECT_EQ(service.override_of(s), SandboxMode::kReadOnly);
}

TEST_F(PolicyServiceTest, TheLatestSwitchIsReflected) {
  const SandboxPolicyService service;
  const SessionLog s = session("s", workspace("ws"));
  for (const SandboxMode mode : {SandboxMode::kWorkspaceWrite, SandboxMode::kDangerFullAccess,
                                 SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite}) {
    set_sandbox_mode(s, mode);
    EXPECT_EQ(service.resolve({.session = &s}).mode, mode);
  }
}

TEST_F(PolicyServiceTest, ASwitchWrittenThroughAnotherHandleIsSeen) {
  const SandboxPolicyService service;
  const SessionLog writer = session("s", workspace("ws"));
  const SessionLog reader = SessionLog::open(writer.path());
  set_sandbox_mode(writer, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(service.resolve({.session = &reader}).mode, SandboxMode::kWorkspaceWrite);
}

TEST_F(PolicyServiceTest, PolicyIsReconstructedAfterReopeningTheLog) {
  const std::string ws = workspace("ws");
  std::string path;
  {
    const SandboxPolicyService service;
    const SessionLog s = session("resumed", ws);
    set_sandbox_mode(s, SandboxMode::kDangerFullAccess);
    set_sandbox_mode(s, SandboxMode::kWorkspaceWrite);
    path = s.path();
  }
  const SandboxPolicyService restarted;  // a new process: nothing survives but the file
  const SessionLog resumed = SessionLog::open(path);
  EXPECT_EQ(resumed.id(), "resumed");
  EXPECT_EQ(resumed.cwd(), ws);
  EXPECT_EQ(restarted.resolve({.session = &resumed}),
            (SandboxExecutionPolicy{SandboxMode::kWorkspaceWrite, ws, "resumed"}));
}

TEST_F(PolicyServiceTest, AnUnknownConfiguredModeIsRejectedListingTheValidModes) {
  for (const char* mode : {"yolo", "", "Read-Only", "read-only "}) {
    try {
      const SandboxPolicyService service({.mode = mode});
      ADD_FAILURE() << "accepted mode " << mode;
    } catch (const InvalidSandboxInputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("unknown sandbox mode"), std::string::npos) << message;
      EXPECT_NE(message.find("read-only, workspace-write, danger-full-access"), std::string::npos)
          << message;
    }
  }
}

TEST_F(PolicyServiceTest, ABadConfiguredRootIsRejected) {
  EXPECT_THROW(SandboxPolicyService({.workspace_root = ""}), InvalidSandboxInputError);
  EXPECT_THROW(SandboxPolicyService({.workspace_root = std::string("/ws\0/x", 6)}),
               InvalidSandboxInputError);
}

TEST_F(PolicyServiceTest, TheExactTextsForAllThreeModes) {
  const std::string ws = workspace("ws");
  const SessionLog s = session("s", ws);
  const SandboxPolicyService service;
  EXPECT_EQ(service.policy_context(&s), kReadOnlyText);
  set_sandbox_mode(s, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(service.policy_context(&s), workspace_write_text("\"" + ws + "\""));
  set_sandbox_mode(s, SandboxMode::kDangerFullAccess);
  EXPECT_EQ(service.policy_context(&s), kDangerText);
}

TEST_F(PolicyServiceTest, TheContextIsEmptyWithoutASession) {
  EXPECT_EQ(SandboxPolicyService({.mode = "workspace-write"}).policy_context(nullptr), "");
}

TEST_F(PolicyServiceTest, TheRootIsJsonQuoted) {
  const SandboxExecutionPolicy policy{SandboxMode::kWorkspaceWrite, "/ws/a \"b\"\\c\n\u00e9",
                                      std::nullopt};
  EXPECT_EQ(sandbox_policy_text(policy), workspace_write_text("\"/ws/a \\\"b\\\"\\\\c\\n\u00e9\""));
}

TEST_F(PolicyServiceTest, TheTextIsByteStableAcrossTmpdir) {
  const std::string ws = workspace("ws");
  const std::string other_tmp = workspace("other-tmp");
  const SessionLog s = session("s", ws);
  set_sandbox_mode(s, SandboxMode::kWorkspaceWrite);
  std::string before;
  {
    const ScopedEnv tmpdir("TMPDIR", "/tmp");
    before = SandboxPolicyService().policy_context(&s);
  }
  std::string after;
  {
    const ScopedEnv tmpdir("TMPDIR", other_tmp.c_str());
    after = SandboxPolicyService().policy_context(&s);
  }
  EXPECT_EQ(before, after);
  EXPECT_EQ(before, workspace_write_text("\"" + ws + "\""));
  EXPECT_EQ(after.find(other_tmp), std::string::npos);
  EXPECT_EQ(after.find("/tmp\""), std::string::npos);
}

// A session's recorded cwd can be rewritten by whoever can write the log; a root the caller
// names for this call wins over it.
TEST_F(PolicyServiceTest, AnExplicitWorkspaceWinsOverTheSessionsCwd) {
  const SessionLog session = SessionLog::create(dir_ / "explicit.jsonl", "s", "/ws/recorded");
  const SandboxPolicyService service;
  SandboxPolicyRequest request;
  request.session = &session;
  EXPECT_EQ(service.resolve(request).workspace_root, "/ws/recorded");
  const std::string named = workspace("named");
  request.workspace_root = ResolvedWorkspace::resolve(named).value();
  const SandboxExecutionPolicy policy = service.resolve(request);
  EXPECT_EQ(policy.workspace_root, named);
  // Resolved once by the caller: handed on as is, for the provider to use without resolving.
  EXPECT_EQ(policy.resolved_workspace, request.workspace_root);
  EXPECT_EQ(to_sandbox_policy(policy)->resolved_workspace, request.workspace_root);
}

TEST_F(PolicyServiceTest, TheTypedConstructorTakesTheResolvedRootAsIs) {
  const std::string root = workspace("typed");
  const SandboxPolicyService service(SandboxMode::kWorkspaceWrite,
                                     ResolvedWorkspace::resolve(root).value());
  EXPECT_EQ(service.default_mode(), SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(service.workspace_root(), root);
  EXPECT_EQ(service.resolve().workspace_root, root);
}

}  // namespace
}  // namespace dsh::sandbox
