// SPDX-License-Identifier: Apache-2.0
// The filesystem plan of one call: the policy's path rules and their defaults, resolved once on
// the host (policy/effective_policy.h) into existing canonical paths, so the generators stay pure
// and every backend acts on the same list.
#pragma once

#include <string>
#include <vector>

namespace dsh::sandbox::profiles {

struct PlannedPath {
  std::string path;  // canonical, existing when the plan was made
  bool directory = false;
  // The sandbox's own state (job outputs, spills): hidden like any unreadable path, but not a
  // path a person named or a secret, so refused reads there are not worth a notification per
  // open of every run (profiles/landlock_run.h landlock_supervisor_args).
  bool internal = false;

  bool operator==(const PlannedPath&) const = default;
};

struct FsPlan {
  // Extra writable roots (allow_write and the cache presets), existing directories.
  std::vector<std::string> writable;
  // Git directories inside writable roots, bound onto themselves under bwrap: a mount point
  // cannot be renamed or removed (EBUSY), so `.git` cannot be swapped for a planted one.
  std::vector<std::string> pinned;
  // Directories inside writable roots in which a startup file is missing (or is a symlink):
  // bound read-only so that no new name can be created in them, then each existing entry in
  // `reopened` bound writable again (regular files and directories; symlinks stay as they are).
  // After `writable`, shallowest first, before `read_only`.
  struct Sealed {
    std::string path;
    std::vector<std::string> reopened;

    bool operator==(const Sealed&) const = default;
  };
  std::vector<Sealed> sealed;
  // Writable roots (the workspace included) beneath a sealed directory, bound writable again
  // after the sealing: a read-only bind makes every mount beneath it read-only too.
  std::vector<std::string> rebound;
  // The home startup files a writable root reaches (home_startup_files() under each home), as
  // spelled: existing or not, each is kept read-only. Backends that cannot keep a missing name
  // from being created refuse a plan where this is non-empty.
  std::vector<std::string> startup_guarded;
  // The homes a writable root reaches, canonical: the launcher's supervisor keeps every
  // dot-entry in them read-only but a data list (--rule-home).
  std::vector<std::string> homes;
  // Read-only carve-outs inside writable roots.
  std::vector<PlannedPath> read_only;
  // Paths the command cannot read.
  std::vector<PlannedPath> unreadable;
  // Landlock grants additively, so with unreadable paths its `--ro /` becomes one read grant per
  // entry of every ancestor of an unreadable path, except the entries on the way to one; symlinks
  // are left out (access through one is checked at its target).
  std::vector<std::string> read_grants;
  // Those ancestors: under Landlock they can be entered but not listed.
  std::vector<std::string> unlisted;

  bool operator==(const FsPlan&) const = default;
};

}  // namespace dsh::sandbox::profiles
