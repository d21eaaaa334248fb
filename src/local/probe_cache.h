// SPDX-License-Identifier: Apache-2.0
// The CLI's per-user verdict cache. Each `dsh-sandbox` call is a new process, so without it
// every call would probe. One entry per key (verdict-<hash>.json, at most 8, the oldest pruned),
// so installs used alternately do not evict each other. It lives where no confined command can
// write: /run/dsh-sandbox for root, $XDG_RUNTIME_DIR/dsh-sandbox (a 0700 tmpfs owned by the user)
// otherwise, each used only while it passes the trust check against the call's untrusted roots
// (the workspace, /tmp, $TMPDIR): otherwise the cache steps aside for that call. An entry is keyed
// by everything that could change the verdict (kernel release, the runners' paths and file
// identities, this binary, the config); a stale entry can only select a backend that then refuses,
// never an unconfined run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dsh/sandbox/local_provider.h"
#include "profiles/profiles.h"

namespace dsh::sandbox::local {

class UserVerdictStore final : public VerdictStore {
 public:
  // `untrusted_roots`: the roots earlier calls let confined runs write (the record, a session's
  // workspaces); the directory is used only while it lies outside them and this call's roots.
  UserVerdictStore(std::string directory, std::string key,
                   std::vector<std::string> untrusted_roots = {});

  std::optional<std::string> load(const SandboxPolicy& policy) override;
  void save(const SandboxPolicy& policy, const std::string& verdict) override;
  void invalidate() override;

  const std::string& path() const { return path_; }

 private:
  std::string directory_;
  std::string name_;
  std::string path_;
  std::string key_;
  std::vector<std::string> untrusted_roots_;
};

// The per-user cache directory, or empty when this user has none that is safe to use.
std::string user_cache_directory();

// Where a user other than root keeps background jobs when there is no per-user cache directory
// (no usable $XDG_RUNTIME_DIR: containers, CI): /var/tmp/dsh-sandbox-jobs-<uid>. Neither backend
// lets a confined run write /var/tmp (bwrap and landlock-run grant only the workspace, /tmp,
// $TMPDIR and extra roots, which the trust check and the provider keep clear of it), and sticky
// /var/tmp lets no other user rename or replace it. Empty for root (/run/dsh-sandbox).
std::string fallback_jobs_base();

// This user's sandbox state that a confined run must not read (LocalSandboxHooks::private_state):
// the per-user cache directory (verdicts, the record, every job's output) or the jobs' place
// without one, where it exists, and the spill directory (kept output). With `create`, the spill
// directory is made (0700) when missing, so that a spill that comes later lands in a place already
// hidden from a run that started before it; without, only what exists (a view that changes
// nothing).
std::vector<std::string> private_state_directories(bool create = true);

// Everything that could change the verdict, as one string.
std::string verdict_key(const LocalSandboxConfig& config, const std::string& bwrap,
                        const std::string& launcher);

// The store for this user, or null when there is no safe place for it. `runners` are the ones the
// provider will use (locate_runners), located once by the caller; `untrusted_roots` as above.
std::shared_ptr<VerdictStore> make_user_verdict_store(
    const LocalSandboxConfig& config, const profiles::Runners& runners,
    std::vector<std::string> untrusted_roots = {});

}  // namespace dsh::sandbox::local
