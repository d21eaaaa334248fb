// SPDX-License-Identifier: Apache-2.0
// canonical_path, writable_roots, resolve_workspace_root.
#include "dsh/sandbox/roots.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "paths.h"
#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

namespace fs = std::filesystem;
using dsh::testing::CwdGuard;
using dsh::testing::native_realpath;
using dsh::testing::ScopedEnv;
using dsh::testing::TempDir;
using namespace std::string_literals;

TEST(CanonicalPath, EqualsTheNativeRealpathOfATempDir) {
  TempDir dir;
  EXPECT_EQ(canonical_path(dir.path()), native_realpath(dir.path()));
}

TEST(CanonicalPath, ResolvesSymlinksAndDotDotTheWayTheKernelDoes) {
  TempDir dir;
  fs::create_directories(dir / "physical/child");
  fs::create_directories(dir / "lexical");
  fs::create_directory_symlink(dir / "physical/child", dir / "lexical/link");
  EXPECT_EQ(canonical_path(dir / "lexical/link/.."), native_realpath(dir / "physical"));
}

TEST(CanonicalPath, MissingPathComesBackAsSpelled) {
  EXPECT_EQ(canonical_path("/no/such/dsh/path/../x"), "/no/such/dsh/path/../x");
  EXPECT_EQ(canonical_path("relative/missing"), "relative/missing");
}

TEST(CanonicalPath, NulByteIsNeverTruncatedToAShorterExistingPath) {
  const std::string with_nul = "/tmp\0/../etc"s;
  EXPECT_EQ(canonical_path(with_nul), with_nul);
}

TEST(WritableRoots, ReadOnlyHasNone) {
  const SandboxPolicy policy{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt};
  EXPECT_TRUE(writable_roots(policy).empty());
}

TEST(WritableRoots, WorkspaceWriteHasWorkspaceTmpAndUserTempCanonicalAndDeduplicated) {
  TempDir workspace;
  TempDir user_temp;
  const ScopedEnv tmpdir("TMPDIR", user_temp.path().c_str());
  const SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, workspace.path(), std::nullopt};
  const std::vector<std::string> roots = writable_roots(policy);
  const std::vector<std::string> expected = {
      native_realpath(workspace.path()), canonical_path("/tmp"), native_realpath(user_temp.path())};
  EXPECT_EQ(roots, expected);
}

TEST(WritableRoots, WorkspaceEqualToTheTempDirAppearsOnce) {
  TempDir workspace;
  const SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, workspace.path(), std::nullopt};
  const std::vector<std::string> roots = writable_roots(policy, workspace.path());
  EXPECT_EQ(roots,
            (std::vector<std::string>{native_realpath(workspace.path()), canonical_path("/tmp")}));
}

TEST(WritableRoots, TempDirThatIsTmpThroughASymlinkCollapsesIntoTmp) {
  TempDir dir;
  fs::create_directory_symlink("/tmp", dir / "tmp-link");
  const SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, dir.path(), std::nullopt};
  const std::vector<std::string> roots = writable_roots(policy, dir / "tmp-link");
  EXPECT_EQ(roots, (std::vector<std::string>{native_realpath(dir.path()), canonical_path("/tmp")}));
}

TEST(WritableRoots, MissingWorkspaceStaysAsSpelled) {
  const SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, "/no/such/ws", std::nullopt};
  EXPECT_EQ(writable_roots(policy, "/tmp").front(), "/no/such/ws");
}

TEST(UserTempDir, FollowsTmpdirThenTmpThenTempThenSlashTmp) {
  const ScopedEnv tmpdir("TMPDIR", nullptr);
  const ScopedEnv tmp("TMP", nullptr);
  const ScopedEnv temp("TEMP", "/from/temp/");
  EXPECT_EQ(user_temp_dir(), "/from/temp");
  {
    const ScopedEnv tmp_set("TMP", "/from/tmp");
    EXPECT_EQ(user_temp_dir(), "/from/tmp");
    const ScopedEnv tmpdir_set("TMPDIR", "/from/tmpdir");
    EXPECT_EQ(user_temp_dir(), "/from/tmpdir");
  }
  const ScopedEnv temp_unset("TEMP", nullptr);
  EXPECT_EQ(user_temp_dir(), "/tmp");
}

TEST(UserTempDir, RelativeValueIsSkipped) {
  const ScopedEnv tmpdir("TMPDIR", "relative/tmp");
  const ScopedEnv tmp("TMP", nullptr);
  const ScopedEnv temp("TEMP", nullptr);
  EXPECT_EQ(user_temp_dir(), "/tmp");
}

TEST(ResolveWorkspaceRoot, RealpathRunsBeforeLexicalNormalization) {
  TempDir dir;
  fs::create_directories(dir / "physical/child");
  fs::create_directories(dir / "lexical");
  fs::create_directory_symlink(dir / "physical/child", dir / "lexical/link");
  const std::string resolved = resolve_workspace_root(dir / "lexical/link/..");
  EXPECT_EQ(resolved, native_realpath(dir / "physical"));
  EXPECT_NE(resolved, native_realpath(dir / "lexical"));
}

TEST(ResolveWorkspaceRoot, MissingPathIsNormalizedLexically) {
  EXPECT_EQ(resolve_workspace_root("/ws/../ws/./sub"), "/ws/sub");
  EXPECT_EQ(resolve_workspace_root("/ws//sub/"), "/ws/sub");
  EXPECT_EQ(resolve_workspace_root("/../.."), "/");
}

TEST(ResolveWorkspaceRoot, RelativePathResolvesAgainstTheWorkingDirectory) {
  TempDir dir;
  fs::create_directories(dir / "sub");
  const CwdGuard cwd(dir.path());
  EXPECT_EQ(resolve_workspace_root("sub"), native_realpath(dir / "sub"));
  EXPECT_EQ(resolve_workspace_root("missing/./x/.."), native_realpath(dir.path()) + "/missing");
  EXPECT_EQ(resolve_workspace_root(""), native_realpath(dir.path()));
}

// The resolver type: only its factory makes one, and it proves an existing canonical directory.
TEST(ResolvedWorkspace, IsTheRealpathOfAnExistingDirectory) {
  TempDir dir;
  fs::create_directories(dir / "physical/child");
  fs::create_directories(dir / "lexical");
  fs::create_directory_symlink(dir / "physical/child", dir / "lexical/link");
  const Result<ResolvedWorkspace> resolved = ResolvedWorkspace::resolve(dir / "lexical/link/..");
  ASSERT_TRUE(resolved) << resolved.error().message;
  EXPECT_EQ(resolved.value().path(), native_realpath(dir / "physical"));
  static_assert(!std::is_default_constructible_v<ResolvedWorkspace>);
  static_assert(!std::is_constructible_v<ResolvedWorkspace, std::string>);
}

TEST(ResolvedWorkspace, ARelativePathResolvesAgainstTheWorkingDirectory) {
  TempDir dir;
  fs::create_directories(dir / "sub");
  const CwdGuard cwd(dir.path());
  EXPECT_EQ(ResolvedWorkspace::resolve("sub").value().path(), native_realpath(dir / "sub"));
  EXPECT_EQ(ResolvedWorkspace::resolve(".").value().path(), native_realpath(dir.path()));
}

TEST(ResolvedWorkspace, EachRefusalHasItsKindAndNamesThePath) {
  TempDir dir;
  const Result<ResolvedWorkspace> missing = ResolvedWorkspace::resolve(dir / "missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error_code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find(dir / "missing"), std::string::npos);
  { const std::ofstream file(dir / "file"); }
  const Result<ResolvedWorkspace> file = ResolvedWorkspace::resolve(dir / "file");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error_code(), ErrorCode::kNotADirectory);
  EXPECT_EQ(ResolvedWorkspace::resolve(dir / "file/below").error_code(), ErrorCode::kNotADirectory);
  EXPECT_EQ(ResolvedWorkspace::resolve("").error_code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ResolvedWorkspace::resolve("/ws\0x"s).error_code(), ErrorCode::kInvalidArgument);
  EXPECT_THROW((void)missing.value(), InvalidSandboxInputError);
}

TEST(IsBeneath, ComparesWholeComponents) {
  EXPECT_TRUE(is_beneath("/ws", "/ws"));
  EXPECT_TRUE(is_beneath("/ws/a/b", "/ws"));
  EXPECT_TRUE(is_beneath("/anything", "/"));
  EXPECT_FALSE(is_beneath("/wsx", "/ws"));
  EXPECT_FALSE(is_beneath("/w", "/ws"));
  EXPECT_FALSE(is_beneath("/tmp", "/tmp/ws"));
}

TEST(LexicallyNormalize, CollapsesDotsAndSlashes) {
  EXPECT_EQ(lexically_normalize("/"), "/");
  EXPECT_EQ(lexically_normalize("//a///b/./c/../d/"), "/a/b/d");
  EXPECT_EQ(lexically_normalize("/a/.."), "/");
  EXPECT_EQ(lexically_normalize("/a/..b/.c"), "/a/..b/.c");
}

}  // namespace
}  // namespace dsh::sandbox
