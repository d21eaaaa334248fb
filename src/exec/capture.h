// SPDX-License-Identifier: Apache-2.0
// One output stream of a command: a bounded in-memory tail plus, once the tail overflows, a
// private spill file holding the full output up to a cap. Spill files
// live in a per-user directory (<root>/dsh-sandbox-<uid>, 0700) outside every sandbox's private
// /tmp; the local provider makes that directory unreadable to confined runs (another run's output
// is not a command's to read), so a path handed to an agent is for its caller to open; they are
// removed when the run ends unless the caller keeps them, and kept ones are bounded
// per user (the oldest removed first).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "exec/exec.h"

namespace dsh::sandbox::exec {

class StreamCapture {
 public:
  // `name` ("stdout", "stderr") prefixes the spill file; the request gives the tail's size, the
  // spill's cap and root, and whether the spill is kept.
  StreamCapture(std::string_view name, const Request& request);
  ~StreamCapture();
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;

  void append(std::string_view chunk);
  StreamOutput finish();  // call once, at the end

 private:
  void spill(std::string_view chunk);
  bool open_spill();

  std::string name_;
  std::size_t max_bytes_;
  std::uint64_t max_spill_bytes_;
  std::string spill_root_;
  bool keep_spill_;
  std::uint64_t kept_spill_bytes_;
  std::string buffer_;  // grows to 2x max_bytes_ before trimming, so appends stay amortized O(1)
  std::uint64_t total_ = 0;
  std::uint64_t spilled_ = 0;
  int spill_fd_ = -1;
  bool spill_failed_ = false;
  std::string spill_path_;
};

// /var/tmp: persistent and the host's (bwrap's workspace-write mounts a private /tmp, and a
// spill must outlive the run for the caller to open). Confined runs cannot read it: the spill
// directory is one of the sandbox's own unreadable paths.
std::string default_spill_root();

// <root>/dsh-sandbox-<euid>, whether it exists or not.
std::string user_spill_path(const std::string& root);

// <root>/dsh-sandbox-<euid>, created 0700 when missing; "" unless it is a real directory (not
// a link) owned by this user and closed to everyone else.
std::string user_spill_dir(const std::string& root);

// Removes the oldest regular files of `dir` (by modification time) until the rest take at most
// `cap` bytes; `keep` is never removed.
void prune_spills(const std::string& dir, std::uint64_t cap, const std::string& keep);

}  // namespace dsh::sandbox::exec
