// SPDX-License-Identifier: Apache-2.0
#include "consumer/denials.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include "base/text.h"
#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/roots.h"
#include "fmt/format.h"
#include "seam/network_entry.h"

namespace dsh::sandbox::consumer {
namespace {

constexpr std::size_t kShownRecords = 8;

bool is_file_rule(const std::string& rule) {
  return rule == "outside-writable-roots" || rule == "read-only-mode";
}

// What no wider confined mode lifts: a path the policy keeps from every confined mode (a default
// secret, a --deny-read path, a protected git or startup file, a --deny-write path), and a
// set-user-ID or set-group-ID bit, never set from inside.
bool is_carve_out_rule(const std::string& rule) {
  return rule == "deny-read" || rule == "deny-write" || rule == "set-id";
}

// The directory that must be writable for the refused operation: the one the entry is created
// in, written in or removed from. A writable root is a directory (the policy refuses a file), so
// a write into an existing file needs its directory too.
std::string writable_dir_for(const Denial& denial) {
  const std::size_t slash = denial.path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return denial.path.substr(0, slash);
}

// A directory the policy accepts as a writable root: not "/" and not beneath /proc, /dev or
// /sys (check_path_rule refuses those, so proposing one would only earn an error).
bool in_kernel_tree(const std::string& path) {
  static constexpr std::array<std::string_view, 3> kKernelTrees = {"/proc", "/dev", "/sys"};
  return std::any_of(kKernelTrees.begin(), kKernelTrees.end(),
                     [&](std::string_view tree) { return is_beneath(path, tree); });
}

bool can_be_writable_root(const std::string& dir) {
  return dir.starts_with('/') && dir != "/" && !in_kernel_tree(dir);
}

// Addresses an allow-list entry must never be proposed for: the host's own services and the
// ones no single destination is (this network, loopback, link-local with the cloud metadata
// services, multicast, reserved and broadcast; IPv6 unspecified, loopback, link-local,
// multicast). An address reaches them through the proxy as any other would.
bool opens_the_host(const IpAddress& address) {
  struct Range {
    std::string_view network;
    int prefix;  // over the 128-bit form (IPv4: 96 + n)
  };
  static constexpr std::array<Range, 9> kRanges = {{{"0.0.0.0", 96 + 8},
                                                    {"127.0.0.0", 96 + 8},
                                                    {"169.254.0.0", 96 + 16},
                                                    {"224.0.0.0", 96 + 4},
                                                    {"240.0.0.0", 96 + 4},
                                                    {"::", 96},  // unspecified, IPv4-compatible
                                                    {"::1", 128},
                                                    {"fe80::", 10},
                                                    {"ff00::", 8}}};
  return std::any_of(kRanges.begin(), kRanges.end(), [&](const Range& range) {
    return in_prefix(address, *parse_ip(range.network), range.prefix);
  });
}

// The proxy records a refused destination as HOST:PORT or [V6]:PORT. The allow-list entry that
// admits exactly that host, when the host is one canonical name or one address that opens
// nothing of the host; nullopt for anything wider (a range such as 0.0.0.0/0, a wildcard, a
// special address, localhost) or a path that names no destination (a malformed request): the
// evidence names one destination, and the advice never admits more.
std::optional<std::string> refused_host(const std::string& path) {
  const std::size_t colon = path.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  return single_destination(path.substr(0, colon));
}

}  // namespace

std::optional<std::string> single_destination(std::string_view host) {
  auto canonical = canonical_network_entry(std::string(host));
  if (!canonical) return std::nullopt;
  const auto parsed = parse_network_entry(canonical.value());
  if (!parsed || parsed.value().port) return std::nullopt;
  const NetworkEntry& entry = parsed.value();
  const bool single_name = entry.kind == NetworkEntry::Kind::kName && entry.name != "localhost" &&
                           !entry.name.ends_with(".localhost");
  const bool single_address = entry.kind == NetworkEntry::Kind::kAddress && entry.prefix == 128 &&
                              !opens_the_host(entry.address);
  if (!single_name && !single_address) return std::nullopt;
  return std::move(canonical).value();
}

std::vector<std::string> allow_list_fix(const SandboxFacts& sandbox) {
  std::vector<std::string> hosts;
  bool network = false;
  for (const Denial& denial : sandbox.denials.records) {
    if (denial.rule != "network-not-allowed") return {};
    network = true;
    const std::optional<std::string> host = refused_host(denial.path);
    if (!host) return {};
    const bool listed = std::find(sandbox.network_allow.begin(), sandbox.network_allow.end(),
                                  *host) != sandbox.network_allow.end();
    if (!listed && std::find(hosts.begin(), hosts.end(), *host) == hosts.end()) {
      hosts.push_back(*host);
    }
  }
  return network ? hosts : std::vector<std::string>{};
}

namespace {

// The change for one refused file operation: the named directory, or the wider mode.
void file_change(const SandboxFacts& sandbox, const Denial& denial,
                 const std::string& workspace_root, std::vector<std::string>& paths,
                 std::vector<std::string>& wider) {
  const bool read_only = sandbox.mode == SandboxMode::kReadOnly;
  if (read_only && !workspace_root.empty() && is_beneath(denial.path, workspace_root)) {
    wider.emplace_back("--mode workspace-write");
    return;
  }
  const std::string dir = writable_dir_for(denial);
  if (!can_be_writable_root(dir)) {
    wider.emplace_back("--mode danger-full-access (no sandbox: every file and the network)");
    return;
  }
  // --allow-write takes effect under workspace-write only.
  paths.push_back(fmt::format("{}--allow-write {}", read_only ? "--mode workspace-write " : "",
                              text::inert(dir)));
}

void add_unique(std::vector<std::string>& out, const std::vector<std::string>& changes) {
  for (const std::string& change : changes) {
    if (std::find(out.begin(), out.end(), change) == out.end()) out.push_back(change);
  }
}

}  // namespace

std::string bracket_escaped(std::string_view inert) {
  std::string out;
  out.reserve(inert.size());
  for (const char c : inert) {
    if (c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

std::optional<std::string> refused_unix_socket(const Denial& denial) {
  // The launcher's record of a connect its supervisor refused names the socket's node, as the
  // kernel resolves it; "(unknown)" when it could not be named.
  if (denial.rule != "network-denied" || denial.op != "connect" || !denial.path.starts_with('/')) {
    return std::nullopt;
  }
  return denial.path;
}

DenialKind denial_kind(const Denial& denial) {
  if (denial.rule == "network-denied" || denial.rule == "network-not-allowed") {
    return DenialKind::kNetwork;
  }
  if (denial.rule == "metadata" || denial.rule == "set-id") return DenialKind::kMetadata;
  if (denial.rule == "kernel-object") return DenialKind::kKernelObject;
  if (denial.rule == "process-bound") return DenialKind::kProcessBound;
  return DenialKind::kFile;
}

std::string_view wire_name(DenialKind kind) {
  switch (kind) {
    case DenialKind::kFile:
      return "file";
    case DenialKind::kMetadata:
      return "metadata";
    case DenialKind::kNetwork:
      return "network";
    case DenialKind::kKernelObject:
      return "kernel-object";
    case DenialKind::kProcessBound:
      return "process-bound";
  }
  return "file";
}

std::vector<std::string> denial_markers(const SandboxFacts& sandbox) {
  if (!sandbox.denied) return {};
  std::set<DenialKind> kinds;
  for (const Denial& denial : sandbox.denials.records) kinds.insert(denial_kind(denial));
  if (kinds.empty()) kinds.insert(DenialKind::kFile);
  const std::string_view mode = wire_name(sandbox.mode);
  std::vector<std::string> markers;
  for (const DenialKind kind : kinds) {
    switch (kind) {
      case DenialKind::kFile:
        markers.push_back(sandbox_denial_marker(sandbox.mode));
        break;
      case DenialKind::kMetadata:
        markers.push_back(fmt::format("[sandbox: metadata change denied under {} mode]", mode));
        break;
      case DenialKind::kNetwork:
        markers.emplace_back("[sandbox: network access denied by the network policy]");
        break;
      case DenialKind::kKernelObject:
        markers.emplace_back("[sandbox: kernel object refused in every confined mode]");
        break;
      case DenialKind::kProcessBound:
        markers.emplace_back("[sandbox: process bound reached]");
        break;
    }
  }
  return markers;
}

bool wider_mode_could_help(const SandboxFacts& sandbox) {
  const auto& records = sandbox.denials.records;
  return records.empty() || std::any_of(records.begin(), records.end(), [](const Denial& d) {
           const DenialKind kind = denial_kind(d);
           return kind != DenialKind::kNetwork && kind != DenialKind::kProcessBound &&
                  !is_carve_out_rule(d.rule);
         });
}

std::vector<std::string> denial_lines(const SandboxFacts& sandbox) {
  std::vector<std::string> lines;
  std::set<std::string> seen;
  for (const Denial& denial : sandbox.denials.records) {
    std::string line = fmt::format(
        "[sandbox refused: {} {} ({})", bracket_escaped(text::inert(denial.op)),
        bracket_escaped(text::inert(denial.path)), bracket_escaped(text::inert(denial.rule)));
    if (!denial.detail.empty()) line += ": " + bracket_escaped(text::inert(denial.detail));
    line += ']';
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

std::optional<std::vector<std::string>> allow_write_fix(const SandboxFacts& sandbox,
                                                        const std::string& workspace_root) {
  const bool read_only = sandbox.mode == SandboxMode::kReadOnly;
  std::vector<std::string> dirs;
  bool accounted = false;  // some record the offer lifts
  for (const Denial& denial : sandbox.denials.records) {
    if (!is_file_rule(denial.rule)) return std::nullopt;
    // A device or kernel file (bash opening /dev/tty on a terminal Landlock alone does not
    // grant): no writable root admits it, and what the command asked for lies elsewhere.
    if (in_kernel_tree(denial.path)) continue;
    accounted = true;
    if (read_only && !workspace_root.empty() && is_beneath(denial.path, workspace_root)) continue;
    std::string dir = writable_dir_for(denial);
    if (!can_be_writable_root(dir)) return std::nullopt;
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(std::move(dir));
  }
  if (!accounted) return std::nullopt;
  return dirs;
}

namespace {

// The change a denial outside the file and network allow-lists needs: most are refused in every
// confined mode, and the sentence says so.
std::string change_beyond_files(const Denial& denial) {
  if (denial.rule == "set-id") {
    return fmt::format(
        "none: a set-user-ID or set-group-ID bit ({} {}) is never set in a confined mode",
        text::inert(denial.op), text::inert(denial.path));
  }
  if (const std::optional<std::string> socket = refused_unix_socket(denial)) {
    return fmt::format("--allow-unix-socket {}", text::inert(*socket));
  }
  if (denial.rule == "network-denied") {
    // The kernel refused the socket itself, before any name or address existed to record.
    return "--network inherit, or --network allow:NAME,... naming what the command needs (the "
           "socket was refused before any name or address was known; a wider file mode does not "
           "help a network refusal)";
  }
  if (denial.rule == "deny-read") {
    return fmt::format(
        "none: {} is unreadable in every confined mode (a default secret or a --deny-read "
        "path); read it outside the sandbox if you mean to",
        text::inert(denial.path));
  }
  if (denial.rule == "deny-write") {
    return fmt::format(
        "none: {} is read-only in every confined mode (git configuration and hooks, a startup "
        "file, or a --deny-write path); change it outside the sandbox if you mean to",
        text::inert(denial.path));
  }
  if (denial.rule == "kernel-object") {
    return fmt::format(
        "none: {} ({}) is refused in every confined mode; only danger-full-access allows it",
        text::inert(denial.op), text::inert(denial.path));
  }
  return fmt::format("a policy that lifts rule {} for {}", text::inert(denial.rule),
                     text::inert(denial.path));
}

}  // namespace

std::vector<std::string> narrowest_changes(const SandboxFacts& sandbox,
                                           const std::string& workspace_root) {
  std::vector<std::string> paths;
  std::vector<std::string> wider;
  // The allow-list's entries plus every refused name, proposed as one --network allow: flag.
  std::vector<std::string> allow = sandbox.network_allow;
  const std::size_t allowed_before = allow.size();
  for (const Denial& denial : sandbox.denials.records) {
    if (denial.rule == "network-not-allowed") {
      const std::optional<std::string> host = refused_host(denial.path);
      if (!host) {
        // Said rather than dropped, so that "nothing to change" is never claimed after a refusal;
        // the refusal's own line names the entry for a person who means it.
        wider.push_back(fmt::format(
            "none for {}: learn never proposes a range, a wildcard or a host-local address "
            "(loopback, link-local, unspecified); write that entry yourself if you mean it",
            text::inert(denial.path)));
      } else if (std::find(allow.begin(), allow.end(), *host) == allow.end()) {
        allow.push_back(*host);
      }
    } else if (is_file_rule(denial.rule) ||
               (denial.rule == "metadata" && sandbox.mode != SandboxMode::kReadOnly)) {
      // A metadata change under workspace-write lies outside the writable roots: the root that
      // admits it, as for a write.
      file_change(sandbox, denial, workspace_root, paths, wider);
    } else if (denial.rule == "metadata") {
      wider.emplace_back("--mode workspace-write");  // read-only alone refuses chmod, chown, ...
    } else {
      wider.push_back(change_beyond_files(denial));
    }
  }
  std::vector<std::string> changes;
  add_unique(changes, paths);
  if (allow.size() > allowed_before) {
    for (std::string& entry : allow) entry = text::inert(entry);
    changes.push_back(fmt::format("--network allow:{}", fmt::join(allow, ",")));
  }
  add_unique(changes, wider);
  return changes;
}

NarrowGrant narrow_grant(const SandboxFacts& sandbox) {
  NarrowGrant grant;
  if (sandbox.mode == SandboxMode::kDangerFullAccess) return grant;
  if (auto dirs = allow_write_fix(sandbox, sandbox.workspace_root)) {
    grant.allow_write = std::move(*dirs);
  } else {
    grant.network_allow = allow_list_fix(sandbox);
  }
  return grant;
}

std::string narrow_grant_marker(const NarrowGrant& grant) {
  const auto listed = [](std::string_view field, const std::vector<std::string>& values) {
    std::vector<std::string> shown;
    shown.reserve(values.size());
    for (const std::string& value : values) shown.push_back(text::quoted(value));
    return fmt::format("{} [{}]", field, fmt::join(shown, ", "));
  };
  std::vector<std::string> fields;
  if (!grant.allow_write.empty()) fields.push_back(listed("allow_write", grant.allow_write));
  if (!grant.network_allow.empty()) fields.push_back(listed("network_allow", grant.network_allow));
  if (!grant.allow_cache.empty()) fields.push_back(listed("allow_cache", grant.allow_cache));
  return fmt::format(
      "[sandbox: narrowest grant \u2014 retry this exact command once with {} + justification; "
      "the approval prompt asks the user for exactly that; not sandbox_permissions, which opens "
      "more]",
      fmt::join(fields, " and "));
}

void add_denial_json(nlohmann::json& object, const SandboxFacts& sandbox) {
  object["denialSource"] = sandbox.denial_source ? nlohmann::json(wire_name(*sandbox.denial_source))
                                                 : nlohmann::json(nullptr);
  nlohmann::json records = nlohmann::json::array();
  for (const Denial& denial : sandbox.denials.records) {
    records.push_back({{"op", denial.op},
                       {"kind", wire_name(denial_kind(denial))},
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
