// SPDX-License-Identifier: Apache-2.0
// A refusal the policy caused, as the kernel side of the sandbox recorded it: out of band, where
// the confined command cannot write. Every producer (the launcher's supervisor, the network
// proxy) speaks the same record, and every surface (`run --json`, the agent render, the session
// log, learn mode) shows the same fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dsh::sandbox {

// One refused operation. `op` and `rule` are short kebab-case words from the lists in
// docs/contract.md (e.g. op "open-write", "unlink", "connect"; rule "outside-writable-roots",
// "read-only-mode", "metadata", "network-denied", "kernel-object", "deny-read", "deny-write",
// "network-not-allowed"). `path` is what the command's process named, resolved from its cwd or
// dirfd inside its view; for the network it is "host:port" or an address.
struct Denial {
  std::string op;
  std::string rule;
  std::string path;
  std::optional<int> pid;
  std::string exe;  // the refused process's executable, as its view names it; may be empty
  // Why, in words, when the producer knows more than the rule: the network proxy names the
  // resolved address, its range and the allow entry that would admit it. May be empty.
  std::string detail;

  bool operator==(const Denial&) const = default;
};

// Where `denied` came from: records the kernel side wrote (kernel), or the stderr dialect of a
// backend that gives no evidence (stderr).
enum class DenialSource { kKernel, kStderr };
std::string_view wire_name(DenialSource source) noexcept;

// A run's records, bounded: at most kMaxDenialRecords kept, `total` counts every refusal any
// producer saw (kept, dropped by a producer's own bound, or dropped here).
struct DenialEvidence {
  std::vector<Denial> records;
  std::uint64_t total = 0;

  bool operator==(const DenialEvidence&) const = default;
};
inline constexpr std::size_t kMaxDenialRecords = 64;

}  // namespace dsh::sandbox
