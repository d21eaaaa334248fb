// SPDX-License-Identifier: Apache-2.0
#include "cli/invocation.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/text.h"
#include "seam/network_entry.h"

namespace dsh::sandbox::cli {

namespace {

Result<void> check_format(const std::string& format) {
  if (format.empty() || format == "agent") return {};
  return InvalidInput{fmt::format("run: unknown --format \"{}\"; expected agent", format)};
}

Result<std::vector<std::string>> command_argv(const Options& options) {
  if (options.command.empty() == options.argv.empty()) {
    return InvalidInput{
        "run: give the command either as -c 'COMMAND' or after -- as ARGV..., exactly once"};
  }
  if (!options.command.empty()) return std::vector<std::string>{"bash", "-c", options.command};
  return options.argv;
}

// CLI11 has already held these to their lists; anything else is a caller that skipped it.
Result<Escalation> escalation(const std::string& text) {
  if (text == "never") return Escalation::kNever;
  if (text == "ask") return Escalation::kAsk;
  return InvalidInput{fmt::format("run: --escalate \"{}\": expected ask or never", text)};
}

Result<StdinMode> stdin_mode(const std::string& text) {
  if (text.empty() || text == "auto") return StdinMode::kAuto;
  if (text == "inherit") return StdinMode::kInherit;
  if (text == "close") return StdinMode::kClose;
  return InvalidInput{fmt::format("run: --stdin \"{}\": expected auto, inherit or close", text)};
}

// --network inherit|deny|allow:LIST, --network-deny LIST and --network-resolve NAME=ADDRESS,
// canonicalised here, once.
Result<void> network_options(const Options& options, PolicyOptions& policy) {
  policy.network_given = !options.network.empty();
  // Confined modes have no network unless the call opens it (docs/contract.md).
  auto network = parse_network_option(policy.network_given ? options.network : "deny");
  if (!network) return network.error();
  for (const std::string_view list :
       {std::string_view(options.network), std::string_view(options.network_deny)}) {
    for (const std::string& note :
         network_list_notes(list.starts_with("allow:") ? list.substr(6) : list)) {
      fmt::print(stderr, "dsh-sandbox: note: {}\n", note);
    }
  }
  policy.network = network.value().first;
  policy.network_allow.allow = std::move(network.value().second);
  const bool extras = !options.network_deny.empty() || !options.network_resolve.empty();
  // Without --network, the config's networkAllow may supply the allow-list these refine.
  if (extras && policy.network_given && policy.network != NetworkPolicy::kAllowList) {
    return InvalidInput{
        "--network-deny and --network-resolve refine an allow-list; give --network allow:LIST "
        "as well"};
  }
  if (!options.network_deny.empty()) {
    auto deny = parse_network_list(options.network_deny);
    if (!deny) return deny.error();
    policy.network_allow.deny = std::move(deny).value();
  }
  for (const std::string& mapping : options.network_resolve) {
    auto canonical = canonical_network_resolve(mapping);
    if (!canonical) return canonical.error();
    policy.network_allow.resolve.push_back(std::move(canonical).value());
  }
  if (!options.allow_unix_socket.empty() && policy.network == NetworkPolicy::kInherit) {
    return InvalidInput{
        "--allow-unix-socket lifts the refusal of host Unix sockets, which only a network that is "
        "not inherited makes; with --network inherit every socket is reachable already"};
  }
  for (const std::string& path : options.allow_unix_socket) {
    // As spelled, made absolute: the launcher takes the socket's identity when the run starts.
    policy.network_allow.unix_sockets.push_back(
        std::filesystem::absolute(path).lexically_normal().string());
  }
  return {};
}

// Digits with at most one '.', nothing else: strtod would also take "inf", "nan", hex and
// leading blanks, none of which is a duration a person writes.
std::optional<double> plain_number(std::string_view digits) {
  const bool shaped = !digits.empty() &&
                      digits.find_first_not_of("0123456789.") == std::string_view::npos &&
                      std::count(digits.begin(), digits.end(), '.') <= 1 && digits != ".";
  if (!shaped || digits.size() > 20) return std::nullopt;
  return std::stod(std::string(digits));
}

}  // namespace

Result<std::optional<double>> parse_duration_ms(std::string_view given) {
  using Deadline = std::optional<double>;
  if (given == "none") return Deadline(std::nullopt);
  struct Unit {
    char suffix;
    double ms;
  };
  static constexpr std::array<Unit, 4> kUnits = {
      {{'s', 1'000}, {'m', 60'000}, {'h', 3'600'000}, {'d', 86'400'000}}};
  double scale = 1'000;  // a bare number is seconds, as --timeout always took it
  std::string_view digits = given;
  for (const Unit& unit : kUnits) {
    if (!given.empty() && given.back() == unit.suffix) {
      scale = unit.ms;
      digits = given.substr(0, given.size() - 1);
    }
  }
  const std::optional<double> number = plain_number(digits);
  // Above the maximum is an error, never a silent cap: the caller asked for more than it gets.
  if (number && *number > 0 && *number * scale <= exec::kMaxDeadlineMs) {
    return Deadline(std::ceil(*number * scale));
  }
  return InvalidInput{fmt::format(
      "--timeout {}: expected a duration above 0 and at most 365d, in seconds (90, 1.5) or with "
      "s, m, h or d (30m, 2h), or none for no deadline",
      text::quoted(given))};
}

namespace {

// Variable names as the environment spells them: no '=', no NUL, not empty.
Result<void> check_env_names(const std::vector<std::string>& names, std::string_view option) {
  for (const std::string& name : names) {
    if (name.empty() || name.find_first_of(std::string_view("=\0", 2)) != std::string::npos) {
      return InvalidInput{
          fmt::format("run: {} \"{}\": expected a variable NAME (no '=')", option, name)};
    }
  }
  return {};
}

}  // namespace

Result<PolicyOptions> policy_options(const Options& options) {
  PolicyOptions policy;
  return (options.mode.empty()
              ? Result<void>()
              : parse_sandbox_mode(options.mode).transform([&policy](SandboxMode mode) {
                  policy.mode = mode;
                }))
      .and_then([&options, &policy] { return network_options(options, policy); })
      .transform([&policy] { return policy; });
}

Result<std::optional<std::uint64_t>> parse_bound(const std::string& text, const std::string& option,
                                                 bool size, std::optional<std::uint64_t> fallback) {
  using Bound = std::optional<std::uint64_t>;
  if (text.empty()) return Bound(fallback);
  if (text == "unlimited") return Bound(std::nullopt);
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::uint64_t scale = 1;
  const std::string suffix = text.substr(digits);
  if (size && suffix.size() == 1) {
    const std::string units = "KMGT";
    const std::size_t unit = units.find(static_cast<char>(std::toupper(suffix[0])));
    if (unit != std::string::npos) scale = std::uint64_t{1} << (10 * (unit + 1));
  }
  const bool bad_suffix = !suffix.empty() && scale == 1;
  std::uint64_t value = 0;
  bool overflow = digits > 15;
  if (!overflow && digits > 0) value = std::stoull(text.substr(0, digits));
  overflow = overflow || (value > 0 && scale > UINT64_MAX / value);
  if (digits == 0 || bad_suffix || overflow || value == 0) {
    return InvalidInput{
        fmt::format("run: {} \"{}\": expected {} or unlimited", option, text,
                    size ? "a positive size such as 512M or 4G" : "a positive whole number")};
  }
  return Bound(value * scale);
}

Result<RunInvocation> run_invocation(const Options& options) {
  const exec::ResourceBounds defaults;
  RunInvocation run;
  run.workspace = options.workspace;
  run.config_path = options.config_path;
  run.session_path = options.session_path;
  run.workdir = options.workdir;
  run.json = options.json;
  run.agent = options.format == "agent";
  run.json_lines = options.json_lines;
  run.verbose = options.verbose;
  run.env_pass = options.env_pass;
  run.env_unset = options.env_unset;
  run.evidence = !options.no_evidence;
  if (run.json && run.json_lines) {
    return InvalidInput{"run: --json and --json-lines: give one of them"};
  }
  // Both read the kernel's records of what was refused; without them they would say nothing.
  if (options.no_evidence && options.learn) {
    return InvalidInput{"run: --learn needs the records --no-evidence turns off; drop one of them"};
  }
  if (options.no_evidence && options.escalate == "ask") {
    return InvalidInput{
        "run: --escalate ask asks only on recorded refusals, which --no-evidence turns off; drop "
        "one of them"};
  }
  return check_format(options.format)
      .and_then([&] {
        return options.timeout.empty() ? Result<std::optional<double>>(exec::kDefaultTimeoutMs)
                                       : parse_duration_ms(options.timeout);
      })
      .transform([&](std::optional<double> deadline) { run.timeout_ms = deadline; })
      .and_then([&] { return check_env_names(options.env_pass, "--env"); })
      .and_then([&] { return check_env_names(options.env_unset, "--unset-env"); })
      .and_then([&] { return command_argv(options); })
      .transform([&](std::vector<std::string> argv) { run.argv = std::move(argv); })
      .and_then([&] { return policy_options(options); })
      .transform([&](PolicyOptions policy) { run.policy = std::move(policy); })
      .and_then([&] {
        return parse_bound(options.max_processes, "--max-processes", false, defaults.max_processes);
      })
      .transform([&](std::optional<std::uint64_t> bound) { run.bounds.max_processes = bound; })
      .and_then([&] {
        return parse_bound(options.max_memory, "--max-memory", true, defaults.max_memory_bytes);
      })
      .transform([&](std::optional<std::uint64_t> bound) { run.bounds.max_memory_bytes = bound; })
      .and_then([&] { return escalation(options.escalate); })
      .transform([&](Escalation escalate) {
        run.escalate = escalate;
        run.learn = options.learn;
      })
      .and_then([&] { return stdin_mode(options.stdin_mode); })
      .transform([&](StdinMode mode) {
        run.stdin_mode = mode;
        run.stdin_given = !options.stdin_mode.empty();
        return std::move(run);
      });
}

}  // namespace dsh::sandbox::cli
