// SPDX-License-Identifier: Apache-2.0
// What every runner home shares: what a run needs of its wrap besides the policy, and what a
// runner said about a settled run on its status channel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dsh::sandbox::profiles {

// ConfineRequest without the argv and the policy.
struct RunNeeds {
  std::string workdir;  // absolute, or empty: none given (no --chdir)
  bool status_channels = false;
  bool denial_evidence = true;  // landlock-run --evidence on its status channel
  // The size of bwrap's private /tmp and /dev/shm (ConfineRequest::tmpfs_bytes); nullopt: tmpfs'
  // default, half of RAM.
  std::optional<std::uint64_t> tmpfs_bytes;
};

// What a run's runners reported out of band. At most one field is set; none: the runner did not
// fail and the command ran.
struct RunnerReport {
  // The runner failed, the command never ran: its own line, exactly as written.
  std::optional<std::string> failure;
  // The sandbox was in place and the kernel refused to execute the command itself: the status a
  // shell reports for it, 127 (not found) or 126 (found, not executable).
  std::optional<int> exec_refused;
  // The runner could not enter the working directory (its view hides it): the errno, ENOENT or
  // EACCES. The command never ran, as when exec cannot enter a workdir.
  std::optional<int> workdir_refused;

  bool operator==(const RunnerReport&) const = default;
};

// The errno a runner's "<prefix>...: <strerror>" line names, as far as a shell's status tells
// them apart: ENOENT, or EACCES for any other refusal; nullopt when `line` does not start with
// `prefix`. Both runners print strerror in the C locale (neither calls setlocale), and glibc
// (bwrap) and musl (landlock-run) word ENOENT as glibc's strerrordesc_np does.
std::optional<int> refused_errno(std::string_view line, std::string_view prefix);

// A runner's line for its exec of the command, as a shell's status: 127 for ENOENT, else 126.
// The exec is the runner's last step, after every restriction is in place.
std::optional<int> exec_refusal(std::string_view line, std::string_view prefix);

}  // namespace dsh::sandbox::profiles
