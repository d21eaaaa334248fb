// SPDX-License-Identifier: Apache-2.0
// The one trust check, against real directories: what it refuses (beneath an untrusted root, a
// directory or file another user owns, group- or world-writable, a symlink planted beneath an
// untrusted root) and what it accepts (files outside every root, symlinks outside every root).
#include "dsh/sandbox/trust.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

using dsh::testing::TempDir;

std::string write_file(const std::string& path, mode_t mode = 0600) {
  { std::ofstream(path) << "{}"; }
  ::chmod(path.c_str(), mode);
  return path;
}

template <typename T>
std::string message_of(const Result<T>& result) {
  return result ? std::string("(trusted)") : result.error().message;
}

TEST(UntrustedRoots, AreTheWorkspaceTmpTempDirAndExtrasCanonicalAndDeduplicated) {
  const std::vector<std::string> extra = {"/var/tmp/x/", "/tmp"};
  EXPECT_EQ(untrusted_roots("/ws/./a/..", extra, "/tmp"),
            (std::vector<std::string>{"/ws", "/tmp", "/var/tmp/x"}));
  EXPECT_EQ(untrusted_roots("", {}, "/run/user/1/t"),
            (std::vector<std::string>{"/tmp", "/run/user/1/t"}));
}

TEST(CheckTrustedPath, AFileOutsideEveryRootOwnedByTheCallerIsTrusted) {
  TempDir dir;  // /var/tmp (sticky) / dsh-it-X (0700, ours)
  const std::string file = write_file(dir / "config.json");
  const auto checked = check_trusted_path(file, untrusted_roots("/nonexistent-ws", {}));
  ASSERT_TRUE(checked) << message_of(checked);
  EXPECT_EQ(checked.value(), file);
}

TEST(CheckTrustedPath, AFileBeneathAnyUntrustedRootIsRefusedNamingTheRoot) {
  TempDir dir;
  const std::string ws = dir.mkdir("ws", 0700);
  const std::string file = write_file(ws + "/config.json");
  EXPECT_NE(message_of(check_trusted_path(file, untrusted_roots(ws, {})))
                .find("\"" + ws + "\" is a root a confined run can write"),
            std::string::npos);
  // The workspace itself, an extra root above it, /tmp.
  EXPECT_FALSE(check_trusted_path(ws, untrusted_roots(ws, {}), TrustedKind::kDirectory));
  const std::vector<std::string> extra = {dir.path()};
  EXPECT_FALSE(check_trusted_path(file, untrusted_roots("", extra)));
  dsh::testing::TempDir tmp(std::filesystem::temp_directory_path());  // $TMPDIR or /tmp
  const std::string in_tmp = write_file(tmp / "config.json");
  EXPECT_NE(message_of(check_trusted_path(in_tmp, untrusted_roots("", {})))
                .find("a confined run can write"),
            std::string::npos);
}

TEST(CheckTrustedPath, GroupOrWorldWritableFileOrDirectoryIsRefused) {
  TempDir dir;
  const std::string sub = dir.mkdir("sub", 0700);
  const std::string file = write_file(sub + "/f");
  const auto roots = untrusted_roots("", {});
  for (const mode_t mode : {0620U, 0602U}) {
    ::chmod(file.c_str(), mode);
    EXPECT_NE(
        message_of(check_trusted_path(file, roots)).find("writable by its group or by others"),
        std::string::npos);
  }
  ::chmod(file.c_str(), 0644);
  EXPECT_TRUE(check_trusted_path(file, roots));
  ::chmod(sub.c_str(), 0777);  // not sticky: anybody could replace the file
  EXPECT_FALSE(check_trusted_path(file, roots));
  ::chmod(sub.c_str(), 01777);  // sticky, as /var/tmp: only the file's owner can replace it
  EXPECT_TRUE(check_trusted_path(file, roots));
  ::chmod(sub.c_str(), 0700);
}

TEST(CheckTrustedPath, AnotherOwnersFileOrDirectoryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can hand a file to another owner";
  TempDir dir;
  const std::string sub = dir.mkdir("sub", 0755);
  const std::string file = write_file(sub + "/f", 0644);
  const auto roots = untrusted_roots("", {});
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  EXPECT_NE(message_of(check_trusted_path(file, roots)).find("uid 65534"), std::string::npos);
  ASSERT_EQ(::chown(file.c_str(), 0, 0), 0);
  ASSERT_EQ(::chown(sub.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(check_trusted_path(file, roots));
}

TEST(CheckTrustedPath, SymlinksAreFollowedOnlyOutsideEveryRoot) {
  TempDir dir;
  const std::string real = dir.mkdir("real", 0700);
  const std::string file = write_file(real + "/config.json");
  const std::string ws = dir.mkdir("ws", 0700);
  // A caller-owned symlink outside every root: ~/.config -> /data/config is legitimate.
  ASSERT_EQ(::symlink(real.c_str(), (dir / "link").c_str()), 0);
  const auto through = check_trusted_path(dir / "link/config.json", untrusted_roots(ws, {}));
  ASSERT_TRUE(through) << message_of(through);
  EXPECT_EQ(through.value(), file);
  // The same symlink planted inside the workspace is refused, target notwithstanding.
  ASSERT_EQ(::symlink(real.c_str(), (ws + "/link").c_str()), 0);
  EXPECT_NE(message_of(check_trusted_path(ws + "/link/config.json", untrusted_roots(ws, {})))
                .find("a confined run can write"),
            std::string::npos);
  // A symlink whose target lies beneath a root is refused at the target.
  const std::string planted = write_file(ws + "/planted.json");
  ASSERT_EQ(::symlink(planted.c_str(), (dir / "to-ws").c_str()), 0);
  EXPECT_FALSE(check_trusted_path(dir / "to-ws", untrusted_roots(ws, {})));
}

TEST(CheckTrustedPath, NonFilesAndRelativePathsAreRefused) {
  TempDir dir;
  const auto roots = untrusted_roots("", {});
  EXPECT_FALSE(check_trusted_path(dir.path(), roots));  // a directory where a file is wanted
  EXPECT_TRUE(check_trusted_path(dir.path(), roots, TrustedKind::kDirectory));
  EXPECT_FALSE(check_trusted_path("relative/config.json", roots));
  EXPECT_FALSE(check_trusted_path(dir / "missing", roots));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_NE(message_of(check_trusted_path(dir / "fifo", roots)).find("not a regular file"),
            std::string::npos);
}

// The resolver type: the trusted walk makes it, and its error says which kind of input it was.
TEST(ResolvedWorkspaceTrusted, IsTheCanonicalDirectoryAndNamesWhatWasRefused) {
  TempDir dir;
  const std::string data = dir.mkdir("data", 0700);
  ASSERT_EQ(::symlink(data.c_str(), (dir / "work").c_str()), 0);
  const auto legit =
      ResolvedWorkspace::resolve_trusted(dir / "work/../work/.", untrusted_roots("", {}));
  ASSERT_TRUE(legit) << message_of(legit);
  EXPECT_EQ(legit.value().path(), data);
  EXPECT_EQ(legit.value(), ResolvedWorkspace::resolve(data).value());

  const std::string earlier = dir.mkdir("ws", 0700);
  ASSERT_EQ(::symlink(data.c_str(), (earlier + "/sub").c_str()), 0);
  const std::vector<std::string> written = {earlier};
  const auto planted =
      ResolvedWorkspace::resolve_trusted(earlier + "/sub", untrusted_roots("", written));
  ASSERT_FALSE(planted);
  EXPECT_EQ(planted.error_code(), ErrorCode::kUntrusted) << message_of(planted);

  const auto missing = ResolvedWorkspace::resolve_trusted(dir / "missing", untrusted_roots("", {}));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error_code(), ErrorCode::kNotFound) << message_of(missing);
  EXPECT_FALSE(ResolvedWorkspace::resolve_trusted("relative", untrusted_roots("", {})));
}

// A resolved workspace is taken as is: the same roots as its spelled path, without a realpath.
TEST(UntrustedRoots, OfAResolvedWorkspaceEqualTheRootsOfItsPath) {
  TempDir dir;
  const std::string data = dir.mkdir("data", 0700);
  const ResolvedWorkspace workspace = ResolvedWorkspace::resolve(data).value();
  const std::vector<std::string> written = {"/var/tmp"};
  EXPECT_EQ(untrusted_roots(workspace, written, "/tmp"), untrusted_roots(data, written, "/tmp"));
  SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, data, std::nullopt,
                       NetworkPolicy::kInherit, workspace};
  EXPECT_EQ(untrusted_roots(policy, {}, "/tmp"), untrusted_roots(data, {}, "/tmp"));
  policy.resolved_workspace.reset();
  EXPECT_EQ(untrusted_roots(policy, {}, "/tmp"), untrusted_roots(data, {}, "/tmp"));
}

TEST(ResolveWorkspaceSymlinks, FollowsSymlinksOutsideRootsAndRefusesPlantedOnes) {
  TempDir dir;
  const std::string data = dir.mkdir("data", 0700);
  ASSERT_EQ(::symlink(data.c_str(), (dir / "work").c_str()), 0);
  const auto legit = resolve_workspace_symlinks(dir / "work", untrusted_roots("", {}));
  ASSERT_TRUE(legit) << message_of(legit);
  EXPECT_EQ(legit.value(), data);
  // An earlier workspace turned into a symlink's home: refused, whatever the target.
  const std::string earlier = dir.mkdir("ws", 0700);
  ASSERT_EQ(::symlink(data.c_str(), (earlier + "/sub").c_str()), 0);
  const std::vector<std::string> written = {earlier};
  const auto planted = resolve_workspace_symlinks(earlier + "/sub", untrusted_roots("", written));
  EXPECT_NE(message_of(planted).find("the symlink \"" + earlier + "/sub\" lies beneath"),
            std::string::npos)
      << message_of(planted);
  // A real directory beneath an earlier workspace is fine: only symlinks can redirect.
  const std::string real_sub = dir.mkdir("ws/real", 0700);
  EXPECT_TRUE(resolve_workspace_symlinks(real_sub, untrusted_roots("", written)));
}

}  // namespace
}  // namespace dsh::sandbox
