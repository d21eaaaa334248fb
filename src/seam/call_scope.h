// SPDX-License-Identifier: Apache-2.0
// One call's memory of what it already checked (internal). A call decides its run from a handful
// of files (the config, the record, the verdict cache, the runners, the CLI itself), and several
// of its steps check the same one against the same roots: while a CallScope is open on this
// thread, check_trusted_path walks each (path, kind, roots) once and hands the same answer to the
// later steps, canonical_root resolves each root once, and /proc/self/exe is read once.
//
// Never across calls, and never across a command: a scope is opened around one call's steps,
// everything kept is dropped when a command is spawned (CallScope::forget, called by exec's
// supervision before any of its modes starts one: an unconfined command can change any file), and
// a child forked through fork(3) (exec's supervisor, a job's detached supervisor) finds no scope
// (pthread_atfork). Nothing is written to disk.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/result.h"
#include "dsh/sandbox/trust.h"

namespace dsh::sandbox {

struct CallMemory;

class CallScope {
 public:
  // The outermost scope of a thread keeps; one opened inside it shares the outer one's memory.
  CallScope();
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  CallScope(CallScope&&) = delete;
  CallScope& operator=(CallScope&&) = delete;

  // check_trusted_path's answer for exactly these arguments, when this call already walked it.
  static std::optional<Result<std::string>> find_check(std::string_view path,
                                                       std::span<const std::string> roots,
                                                       TrustedKind kind);
  static void keep_check(std::string_view path, std::span<const std::string> roots,
                         TrustedKind kind, const Result<std::string>& answer);

  // A root's canonical form, when this call already resolved it (or was told it is canonical).
  static std::optional<std::string> find_canonical(std::string_view root);
  static void keep_canonical(std::string_view root, const std::string& canonical);
  // Roots read from trusted state that holds canonical paths only (the record of writable
  // workspaces): taken as they are, without a realpath each.
  static void keep_canonical(std::span<const std::string> canonical_roots);

  // Drops everything kept: a command is about to start.
  static void forget();

 private:
  CallMemory* outer_ = nullptr;
  std::unique_ptr<CallMemory> own_;
};

// The running executable's path (/proc/self/exe), read once per open CallScope; "" when it
// cannot be read.
std::string self_executable();

// `root` made canonical (realpath, then lexically normalized when absolute; as spelled when it
// does not exist), through the open CallScope's memory.
std::string canonical_root(std::string_view root);

}  // namespace dsh::sandbox
