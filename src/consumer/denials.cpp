// SPDX-License-Identifier: Apache-2.0
#include "consumer/denials.h"

#include <algorithm>
#include <optional>
#include <set>

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/roots.h"
#include "fmt/format.h"

namespace dsh::sandbox::consumer {
namespace {

constexpr std::size_t kShownRecords = 8;

bool is_file_rule(const std::string& rule) {
  return rule == "outside-writable-roots" || rule == "read-only-mode";
}

// The directory that must be writable for the refused operation: the file itself for a write
// into an existing file, else the directory the entry is created in or removed from.
std::string writable_dir_for(const Denial& denial) {
  if (denial.op == "open-write" || denial.op == "truncate") return denial.path;
  const std::size_t slash = denial.path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return denial.path.substr(0, slash);
}

// The proxy records a refused destination as HOST:PORT or [V6]:PORT: the host, as the allow-list
// entry that would admit it; nullopt for a path that names no destination (a malformed request).
std::optional<std::string> refused_host(const std::string& path) {
  const std::size_t colon = path.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  auto canonical = canonical_network_entry(path.substr(0, colon));
  if (!canonical) return std::nullopt;
  return std::move(canonical).value();
}

}  // namespace

std::vector<std::string> denial_lines(const SandboxFacts& sandbox) {
  std::vector<std::string> lines;
  std::set<std::string> seen;
  for (const Denial& denial : sandbox.denials.records) {
    std::string line =
        denial.detail.empty()
            ? fmt::format("[sandbox refused: {} {} ({})]", denial.op, denial.path, denial.rule)
            : fmt::format("[sandbox refused: {} {} ({}): {}]", denial.op, denial.path, denial.rule,
                          denial.detail);
    if (!seen.insert(line).second) continue;
    if (lines.size() == kShownRecords) break;
    lines.push_back(std::move(line));
  }
  const std::uint64_t shown = lines.size();
  if (sandbox.denials.total > shown && !lines.empty()) {
    lines.push_back(fmt::format("[sandbox refused {} operations in all]", sandbox.denials.total));
  }
  return lines;
}

std::vector<std::string> narrowest_changes(const SandboxFacts& sandbox,
                                           const std::string& workspace_root) {
  std::vector<std::string> changes;
  const auto add = [&changes](std::string change) {
    if (std::find(changes.begin(), changes.end(), change) == changes.end()) {
      changes.push_back(std::move(change));
    }
  };
  // The allow-list's entries plus every refused name, proposed as one --network allow: flag.
  std::vector<std::string> allow = sandbox.network_allow;
  const std::size_t allowed_before = allow.size();
  std::optional<std::size_t> allow_position;
  for (const Denial& denial : sandbox.denials.records) {
    if (denial.rule == "network-not-allowed") {
      const std::optional<std::string> host = refused_host(denial.path);
      if (!host) continue;
      if (std::find(allow.begin(), allow.end(), *host) == allow.end()) allow.push_back(*host);
      if (!allow_position) allow_position = changes.size();
      continue;
    }
    if (is_file_rule(denial.rule)) {
      if (sandbox.mode == SandboxMode::kReadOnly && !workspace_root.empty() &&
          is_beneath(denial.path, workspace_root)) {
        add("--mode workspace-write");
      } else {
        add("--allow-write " + writable_dir_for(denial));
      }
    } else if (denial.rule == "metadata") {
      add("--mode workspace-write");  // read-only alone refuses chmod, chown, utimes, xattrs
    } else if (denial.rule == "network-denied") {
      // The kernel refused the socket itself, before any name or address existed to record.
      add("--network inherit, or --network allow:NAME,... naming what the command needs (the "
          "socket was refused before any name or address was known; a wider file mode does not "
          "help a network refusal)");
    } else if (denial.rule == "kernel-object") {
      add("none: " + denial.op + " (" + denial.path +
          ") is refused in every confined mode; only danger-full-access allows it");
    } else {
      add("a policy that lifts rule " + denial.rule + " for " + denial.path);
    }
  }
  if (allow_position && allow.size() > allowed_before) {
    changes.insert(changes.begin() + static_cast<std::ptrdiff_t>(*allow_position),
                   fmt::format("--network allow:{}", fmt::join(allow, ",")));
  }
  return changes;
}

void add_denial_json(nlohmann::json& object, const SandboxFacts& sandbox) {
  object["denialSource"] = sandbox.denial_source ? nlohmann::json(wire_name(*sandbox.denial_source))
                                                 : nlohmann::json(nullptr);
  nlohmann::json records = nlohmann::json::array();
  for (const Denial& denial : sandbox.denials.records) {
    records.push_back({{"op", denial.op},
                       {"path", denial.path},
                       {"rule", denial.rule},
                       {"pid", denial.pid ? nlohmann::json(*denial.pid) : nlohmann::json(nullptr)},
                       {"exe", denial.exe}});
    if (!denial.detail.empty()) records.back()["detail"] = denial.detail;
  }
  object["denials"] = std::move(records);
  object["denialCount"] = sandbox.denials.total;
}

}  // namespace dsh::sandbox::consumer
