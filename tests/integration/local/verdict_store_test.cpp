// SPDX-License-Identifier: Apache-2.0
// The CLI's per-user verdict cache, exercised through local::UserVerdictStore
// in a private directory, never the real per-user location: an entry is served only to its own
// key, only from an owner-only file in an owner-only directory, never to (or from) a policy that
// could write it; and a provider trusts a stored verdict without probing until told the runner
// refused, when it forgets it and probes again.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "dsh/sandbox/roots.h"
#include "local/probe_cache.h"
#include "local/verdict_codec.h"
#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

using sandbox::SandboxPolicy;
using sandbox::local::UserVerdictStore;

constexpr uid_t kNobody = 65534;

// A call whose workspace is far from the cache (a workspace of / could have written it).
SandboxPolicy read_only() {
  return {ConfinedSandboxMode::kReadOnly, "/nonexistent/dsh-it-workspace", std::nullopt};
}
SandboxPolicy workspace_write(const std::string& root) {
  return {ConfinedSandboxMode::kWorkspaceWrite, root, std::nullopt};
}

mode_t mode_of(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode;
}

class VerdictStore : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    directory_ = base_ / "cache";  // created by the first save, 0700
    store_ = std::make_shared<UserVerdictStore>(directory_, key_);
  }
  TempDir base_;
  std::string directory_;
  std::string key_ = unique("key");
  std::shared_ptr<UserVerdictStore> store_;
};

TEST_F(VerdictStore, SavedVerdictLoadsBackFromAnOwnerOnlyFile) {
  EXPECT_EQ(store_->load(read_only()), std::nullopt);
  store_->save(read_only(), "verdict-1");
  EXPECT_EQ(store_->path().rfind(directory_ + "/verdict-", 0), 0U) << store_->path();
  EXPECT_EQ(mode_of(directory_) & 07777, 0700U);
  const mode_t file = mode_of(store_->path());
  EXPECT_TRUE(S_ISREG(file));
  EXPECT_EQ(file & 0077, 0U);
  EXPECT_EQ(store_->load(read_only()), "verdict-1");
  // A workspace-write policy whose writable roots do not reach the cache is served too.
  TempDir elsewhere;
  const std::vector<std::string> roots = sandbox::writable_roots(workspace_write(elsewhere.path()));
  for (const std::string& root : roots) ASSERT_NE(directory_.rfind(root + "/", 0), 0U) << root;
  EXPECT_EQ(store_->load(workspace_write(elsewhere.path())), "verdict-1");
  // A new store over the same place and key (the next CLI process) sees it.
  EXPECT_EQ(UserVerdictStore(directory_, key_).load(read_only()), "verdict-1");
}

TEST_F(VerdictStore, AnotherKeyGetsNothing) {
  store_->save(read_only(), "verdict-1");
  EXPECT_EQ(UserVerdictStore(directory_, key_ + "-other").load(read_only()), std::nullopt);
  EXPECT_EQ(store_->load(read_only()), "verdict-1");
}

// Two installs (or builds, or configs) used alternately each keep their entry: neither evicts
// the other, so neither re-probes on every switch.
TEST_F(VerdictStore, KeysUsedAlternatelyKeepTheirOwnEntries) {
  UserVerdictStore other(directory_, key_ + "-other");
  store_->save(read_only(), "verdict-1");
  other.save(read_only(), "verdict-2");
  EXPECT_NE(other.path(), store_->path());
  EXPECT_EQ(store_->load(read_only()), "verdict-1");
  EXPECT_EQ(other.load(read_only()), "verdict-2");
  other.invalidate();  // forgets only its own entry
  EXPECT_EQ(other.load(read_only()), std::nullopt);
  EXPECT_EQ(store_->load(read_only()), "verdict-1");
}

// Every rebuild of dsh-sandbox is a new key: the directory keeps the 8 newest entries.
TEST_F(VerdictStore, EntriesAreBoundedOldestFirst) {
  store_->save(read_only(), "oldest");
  // An hour old: file times tick at the kernel's coarse clock, so entries written in one
  // millisecond can tie.
  const std::filesystem::path oldest = store_->path();
  std::filesystem::last_write_time(
      oldest, std::filesystem::last_write_time(oldest) - std::chrono::hours(1));
  for (int i = 0; i < 20; ++i) {
    UserVerdictStore(directory_, key_ + "-" + std::to_string(i)).save(read_only(), "v");
  }
  std::size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory_)) {
    if (entry.path().filename().string().starts_with("verdict-")) ++entries;
  }
  EXPECT_EQ(entries, 8U);
  EXPECT_EQ(store_->load(read_only()), std::nullopt);  // the oldest went first
  EXPECT_EQ(UserVerdictStore(directory_, key_ + "-19").load(read_only()), "v");
}

TEST_F(VerdictStore, TheSingleFileOfEarlierBuildsIsRemovedOnSave) {
  store_->save(read_only(), "verdict-1");
  const std::string legacy = directory_ + "/verdict.json";
  { std::ofstream(legacy) << R"({"key":"k","verdict":"v"})"; }
  store_->save(read_only(), "verdict-2");
  EXPECT_FALSE(std::filesystem::exists(legacy));
  EXPECT_EQ(store_->load(read_only()), "verdict-2");
}

TEST_F(VerdictStore, GroupOrWorldWritableFileOrDirectoryIsIgnored) {
  store_->save(read_only(), "verdict-1");
  for (const mode_t mode : {0620U, 0602U, 0622U}) {
    ASSERT_EQ(::chmod(store_->path().c_str(), mode), 0);
    EXPECT_EQ(store_->load(read_only()), std::nullopt) << std::oct << mode;
  }
  ASSERT_EQ(::chmod(store_->path().c_str(), 0600), 0);
  EXPECT_EQ(store_->load(read_only()), "verdict-1");  // control
  for (const mode_t mode : {0770U, 0707U, 0750U}) {
    ASSERT_EQ(::chmod(directory_.c_str(), mode), 0);
    EXPECT_EQ(store_->load(read_only()), std::nullopt) << std::oct << mode;
  }
  ASSERT_EQ(::chmod(directory_.c_str(), 0700), 0);
  EXPECT_EQ(store_->load(read_only()), "verdict-1");  // control
}

TEST_F(VerdictStore, FileOfAnotherOwnerIsIgnored) {
  store_->save(read_only(), "verdict-1");
  // A symlink to somebody else's file: never followed, in either leg.
  const std::string foreign = base_ / "foreign.json";
  llrt::write_file(foreign, R"({"key": ")" + key_ + R"(", "verdict": "forged"})", 0600);
  ASSERT_EQ(std::remove(store_->path().c_str()), 0);
  ASSERT_EQ(::symlink(foreign.c_str(), store_->path().c_str()), 0);
  EXPECT_EQ(store_->load(read_only()), std::nullopt);
  ASSERT_EQ(std::remove(store_->path().c_str()), 0);
  store_->save(read_only(), "verdict-1");
  EXPECT_EQ(store_->load(read_only()), "verdict-1");  // control
  if (is_root()) {
    // Only root can hand a file or the directory to another owner.
    ASSERT_EQ(::chown(store_->path().c_str(), kNobody, kNobody), 0);
    EXPECT_EQ(store_->load(read_only()), std::nullopt);
    ASSERT_EQ(::chown(store_->path().c_str(), 0, 0), 0);
    EXPECT_EQ(store_->load(read_only()), "verdict-1");  // control
    ASSERT_EQ(::chown(directory_.c_str(), kNobody, kNobody), 0);
    EXPECT_EQ(store_->load(read_only()), std::nullopt);
    store_->save(read_only(), "verdict-2");  // nor written into a directory of another owner
    ASSERT_EQ(::chown(directory_.c_str(), 0, 0), 0);
    EXPECT_EQ(store_->load(read_only()), "verdict-1");
  }
}

TEST_F(VerdictStore, PolicyThatCanWriteTheCacheNeitherLoadsNorSaves) {
  store_->save(read_only(), "verdict-1");
  for (const std::string& root : {base_.path(), directory_, std::string("/")}) {
    SCOPED_TRACE(root);
    EXPECT_EQ(store_->load(workspace_write(root)), std::nullopt);
    store_->save(workspace_write(root), "poisoned");
    EXPECT_EQ(store_->load(read_only()), "verdict-1");
  }
  // Nor does such a policy create the cache.
  const std::string fresh = base_ / "fresh-cache";
  UserVerdictStore unborn(fresh, key_);
  unborn.save(workspace_write(base_.path()), "poisoned");
  EXPECT_FALSE(llrt::exists(fresh));
}

TEST_F(VerdictStore, InvalidateRemovesTheEntry) {
  store_->save(read_only(), "verdict-1");
  ASSERT_TRUE(llrt::exists(store_->path()));
  store_->invalidate();
  EXPECT_FALSE(llrt::exists(store_->path()));
  EXPECT_EQ(store_->load(read_only()), std::nullopt);
}

// A stored verdict is trusted without probing (that is the cache's point), even a stale one that
// names Landlock on a host where bwrap works; invalidate_verdict() forgets it and probes again.
TEST_F(VerdictStore, ProviderUsesAStoredVerdictUnprobedAndProbesAfterInvalidate) {
  sandbox::profiles::LandlockFeatures features;
  features.enforcement = sandbox::SandboxEnforcement::kFull;
  features.abi = llrt::kernel_abi();
  features.deny_network = features.scope_ipc = features.deny_metadata = true;
  store_->save(read_only(), sandbox::local::encode_selection(
                                {sandbox::SandboxBackend::kLandlock, features}, llrt::launcher()));

  auto provider = make_provider(Backend::kNatural, store_);
  TempDir workspace;
  const std::string target = workspace / "file";
  const ConfinedArgv stale = confine(*provider, bash("printf x > " + target),
                                     ConfinedSandboxMode::kReadOnly, workspace.path());
  EXPECT_EQ(provider->probes_run(), 0);
  EXPECT_EQ(stale.backend, "landlock");
  EXPECT_EQ(stale.argv.front(), llrt::launcher());
  const RunResult ran = spawn(stale);  // the stale backend still confines
  EXPECT_FALSE(ran.exited_with(0)) << ran.describe();
  EXPECT_FALSE(llrt::exists(target));

  provider->invalidate_verdict();
  EXPECT_FALSE(llrt::exists(store_->path()));
  const ConfinedArgv fresh = confine(*provider, bash("printf x > " + target),
                                     ConfinedSandboxMode::kReadOnly, workspace.path());
  EXPECT_EQ(provider->probes_run(), 2);
  EXPECT_EQ(fresh.backend, "bwrap+landlock");
  // The new verdict is stored for the next process.
  const std::optional<std::string> stored = store_->load(read_only());
  ASSERT_TRUE(stored.has_value());
  constexpr std::array kLinux = {sandbox::SandboxBackend::kBwrap,
                                 sandbox::SandboxBackend::kLandlock};
  const auto selection = sandbox::local::decode_selection(*stored, kLinux, llrt::launcher());
  ASSERT_TRUE(selection.has_value()) << *stored;
  EXPECT_EQ(selection->backend, sandbox::SandboxBackend::kBwrap);
  EXPECT_TRUE(selection->landlock.has_value());
}

TEST_F(VerdictStore, UndecodableStoredVerdictIsProbedOver) {
  store_->save(read_only(), R"({"backend": "no-such-backend"})");
  auto provider = make_provider(Backend::kNatural, store_);
  TempDir workspace;
  const ConfinedArgv confined =
      confine(*provider, {"/bin/true"}, ConfinedSandboxMode::kReadOnly, workspace.path());
  EXPECT_EQ(provider->probes_run(), 2);
  EXPECT_EQ(confined.backend, "bwrap+landlock");
}

// Fault injection: whatever sits in the entry (corrupted, truncated, a backend of another
// platform, features weaker than this launcher reports, oversized, a symlink), the provider
// probes afresh and the run confines as fully as ever: the launcher is in the argv with its IPC
// scoping and metadata filter, and a write outside the workspace is refused on the host.
class VerdictFaults : public VerdictStore, public ::testing::WithParamInterface<Backend> {
 protected:
  std::string entry(const std::string& verdict) const {
    return nlohmann::json{{"key", key_}, {"verdict", verdict}}.dump();
  }
  void plant(const std::string& content) const {
    std::filesystem::create_directories(directory_);
    ::chmod(directory_.c_str(), 0700);
    std::remove(store_->path().c_str());
    llrt::write_file(store_->path(), content, 0600);
  }
  void expect_fresh_full_confinement(const std::string& fault) {
    SCOPED_TRACE(fault);
    auto provider = make_provider(GetParam(), store_);
    TempDir workspace;
    const std::string target = workspace.path() + "-outside";
    const ConfinedArgv confined = confine(*provider, bash("printf x > " + target),
                                          ConfinedSandboxMode::kReadOnly, workspace.path());
    EXPECT_GT(provider->probes_run(), 0);
    EXPECT_EQ(confined.backend, expected_backend_name(GetParam()));
    const auto has = [&](const std::string& word) {
      return std::find(confined.argv.begin(), confined.argv.end(), word) != confined.argv.end();
    };
    EXPECT_TRUE(has(llrt::launcher()));
    if (llrt::kernel_abi() >= 6) {
      EXPECT_TRUE(has("--scope-ipc"));
    }
    EXPECT_TRUE(has("--deny-metadata"));
    EXPECT_EQ(confined.argv.front().front(), '/');
    const RunResult ran = spawn(confined);
    EXPECT_FALSE(ran.exited_with(0)) << ran.describe();
    EXPECT_FALSE(llrt::exists(target));
    std::remove(target.c_str());
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, VerdictFaults,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

TEST_P(VerdictFaults, AnyDamagedOrForeignEntryMeansAFreshProbeNeverAWeakerRun) {
  const std::string launcher = llrt::launcher();
  const std::string weakened =
      R"({"backend":"bwrap","launcher":")" + launcher +
      R"(","landlock":{"enforcement":"full","abi":7,"denyNetwork":true,"scopeIpc":false,)"
      R"("denyMetadata":false}})";
  const std::string valid = entry(R"({"backend":"landlock","launcher":")" + launcher +
                                  R"(","landlock":{"enforcement":"full","abi":7,)"
                                  R"("denyNetwork":true,"scopeIpc":true,"denyMetadata":true}})");
  const std::vector<std::pair<std::string, std::string>> faults = {
      {"corrupted", entry("{\"backend\": bwrap")},
      {"truncated", valid.substr(0, valid.size() / 2)},
      {"foreign platform", entry(R"({"backend":"windows-acl"})")},
      {"weakened features", entry(weakened)},
      {"another launcher", entry(R"({"backend":"landlock","launcher":"/tmp/landlock-run",)"
                                 R"("landlock":{"enforcement":"full","abi":7,"denyNetwork":true,)"
                                 R"("scopeIpc":true,"denyMetadata":true}})")},
      {"oversized verdict", entry(R"({"backend":"bwrap")" + std::string(8192, ' ') + "}")},
      {"oversized entry", entry("x") + std::string(70000, ' ')},
  };
  for (const auto& [fault, content] : faults) {
    plant(content);
    expect_fresh_full_confinement(fault);
  }
  // A symlinked entry, pointing at a file that would otherwise decode: never followed.
  const std::string elsewhere = base_ / "elsewhere.json";
  llrt::write_file(elsewhere, entry(R"({"backend":"bwrap"})"), 0600);
  plant("");
  std::remove(store_->path().c_str());
  ASSERT_EQ(::symlink(elsewhere.c_str(), store_->path().c_str()), 0);
  expect_fresh_full_confinement("symlinked entry");
}

// A cache inside the call's workspace is neither read nor written, in read-only mode too (an
// earlier workspace-write run on the same workspace could have written it).
TEST_F(VerdictStore, CacheInsideTheWorkspaceIsIgnoredInEveryMode) {
  store_->save(read_only(), "verdict-1");
  const SandboxPolicy read_only_here{ConfinedSandboxMode::kReadOnly, base_.path(), std::nullopt};
  EXPECT_EQ(store_->load(read_only_here), std::nullopt);
  store_->save(read_only_here, "poisoned");
  EXPECT_EQ(store_->load(read_only()), "verdict-1");
}

// The real per-user location, read only: root's is /run/dsh-sandbox, owner-only; a user without
// XDG_RUNTIME_DIR (the nobody leg) has none rather than an unsafe one.
TEST_F(VerdictStore, RealUserCacheLocationIsOwnerOnlyOrAbsent) {
  const std::string directory = sandbox::local::user_cache_directory();
  if (is_root()) {
    EXPECT_EQ(directory, "/run/dsh-sandbox");
  } else if (::getenv("XDG_RUNTIME_DIR") == nullptr) {
    EXPECT_EQ(directory, "");
  }
  if (directory.empty()) return;
  struct stat info {};
  if (::lstat(directory.c_str(), &info) != 0) return;  // no cache yet
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(info.st_uid, ::geteuid());
  EXPECT_EQ(info.st_mode & 0077, 0U);
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (!entry.path().filename().string().starts_with("verdict-")) continue;
    ASSERT_EQ(::lstat(entry.path().c_str(), &info), 0);
    EXPECT_TRUE(S_ISREG(info.st_mode)) << entry.path();
    EXPECT_EQ(info.st_uid, ::geteuid()) << entry.path();
    EXPECT_EQ(info.st_mode & 07777, 0600U) << entry.path();
  }
}

}  // namespace
}  // namespace dsh::local_it
