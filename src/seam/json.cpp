// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "seam/json_codec.h"

namespace dsh::sandbox {

namespace json {

namespace {

using nlohmann::json;

InvalidInput field_error(std::string_view what, std::string_view field, std::string_view shape) {
  return InvalidInput{fmt::format("{} JSON: field \"{}\" {}", what, field, shape)};
}

Result<std::string> string_field(const json& object, std::string_view field,
                                 std::string_view what) {
  const auto it = object.find(field);
  if (it == object.end()) return field_error(what, field, "is missing");
  if (!it->is_string()) return field_error(what, field, "must be a string");
  return it->get<std::string>();
}

Result<std::vector<int>> int_array(const json& object, std::string_view field,
                                   std::string_view what) {
  const auto it = object.find(field);
  const auto fits_int = [](const json& v) {
    return v.is_number_integer() && v.get<long long>() >= INT32_MIN &&
           v.get<long long>() <= INT32_MAX;
  };
  if (it == object.end() || !it->is_array() || !std::all_of(it->begin(), it->end(), fits_int)) {
    return field_error(what, field, "must be an array of integer exit codes");
  }
  return it->get<std::vector<int>>();
}

// The optional "network" field. Absent from a policy it means deny: a confined command has no
// network unless the policy opens it (docs/contract.md says why this differs from the
// reference). Absent from a ConfinedArgv the reference wrote, the argv restricts nothing.
Result<NetworkPolicy> network_field(const json& object, std::string_view what,
                                    NetworkPolicy absent) {
  if (!object.contains("network")) return absent;
  auto name = string_field(object, "network", what);
  if (!name) return name.error();
  return parse_network_policy(name.value());
}

constexpr std::string_view kBase64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// RFC 4648 base64 with padding: a descriptor's content is raw bytes, JSON strings are text.
std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t j = 0; j < 3; ++j) {
      group = (group << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0U);
    }
    for (std::size_t j = 0; j < 4; ++j) {
      out.push_back(j <= n ? kBase64[(group >> (18 - 6 * j)) & 0x3f] : '=');
    }
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t group = 0;
    std::size_t padding = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      const bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        ++padding;
        group <<= 6;
        continue;
      }
      const std::size_t value = kBase64.find(c);
      if (value == std::string_view::npos || padding > 0) return std::nullopt;
      group = (group << 6) | static_cast<std::uint32_t>(value);
    }
    for (std::size_t j = 0; j < 3 - padding; ++j) {
      out.push_back(static_cast<char>((group >> (16 - 8 * j)) & 0xff));
    }
  }
  return out;
}

Result<json> object_of(const json& value, std::string_view what) {
  if (!value.is_object()) return InvalidInput{fmt::format("{} JSON must be an object", what)};
  return value;
}

}  // namespace

Result<std::vector<std::string>> string_array(const json& object, std::string_view field,
                                              std::string_view what) {
  const auto it = object.find(field);
  if (it == object.end()) return field_error(what, field, "is missing");
  const auto is_string = [](const json& v) { return v.is_string(); };
  if (!it->is_array() || !std::all_of(it->begin(), it->end(), is_string)) {
    return field_error(what, field, "must be an array of strings");
  }
  return it->get<std::vector<std::string>>();
}

json to_value(const RunnerFailureRule& rule) {
  json value = json::object();
  if (rule.allowed_exit_codes) value["allowedExitCodes"] = *rule.allowed_exit_codes;
  value["fatalSignatures"] = rule.fatal_signatures;
  if (rule.informational_lines) value["informationalLines"] = *rule.informational_lines;
  return value;
}

json to_value(const ConfinedArgv& confined) {
  json rules = json::array();
  for (const RunnerFailureRule& rule : confined.runner_failure_rules) {
    rules.push_back(to_value(rule));
  }
  json fds = json::array();
  for (const ProvidedFd& fd : confined.provided_fds) {
    fds.push_back(
        {{"fd", fd.fd}, {"purpose", fd.purpose}, {"contentBase64", base64_encode(fd.content)}});
  }
  json layers = json::array();
  for (const RunnerLayer layer : confined.layers) layers.push_back(layer_name(layer));
  json channels = json::array();
  for (const StatusChannel& channel : confined.status_channels) {
    channels.push_back({{"fd", channel.fd},
                        {"layer", layer_name(channel.layer)},
                        {"format", status_format_name(channel.format)}});
  }
  return json{{"argv", confined.argv},
              {"enforcement", wire_name(confined.enforcement)},
              {"denialSignatures", confined.denial_signatures},
              {"runnerFailureRules", std::move(rules)},
              {"backend", confined.backend},
              {"ungoverned", confined.ungoverned},
              {"strictEnforcement", wire_name(confined.strict_enforcement)},
              {"network", wire_name(confined.network)},
              {"providedFds", std::move(fds)},
              {"refused", confined.refused},
              {"layers", std::move(layers)},
              {"statusChannels", std::move(channels)}};
}

json to_value(const SandboxPolicy& policy) {
  json value{{"mode", wire_name(policy.mode)}, {"workspaceRoot", policy.workspace_root}};
  if (policy.session_id) value["sessionId"] = *policy.session_id;
  value["network"] = wire_name(policy.network);
  // The path rules only when set: a policy without them reads as the reference wrote it.
  if (!policy.allow_write.empty()) value["allowWrite"] = policy.allow_write;
  if (!policy.deny_write.empty()) value["denyWrite"] = policy.deny_write;
  if (!policy.deny_read.empty()) value["denyRead"] = policy.deny_read;
  if (!policy.allow_cache.empty()) value["allowCache"] = policy.allow_cache;
  if (!policy.network_allow.unix_sockets.empty()) {
    value["allowUnixSockets"] = policy.network_allow.unix_sockets;
  }
  if (policy.network == NetworkPolicy::kAllowList) {
    value["networkAllow"] = policy.network_allow.allow;
    value["networkDeny"] = policy.network_allow.deny;
    if (!policy.network_allow.resolve.empty()) {
      value["networkResolve"] = policy.network_allow.resolve;
    }
  }
  return value;
}

Result<RunnerFailureRule> runner_failure_rule_from_value(const json& value) {
  constexpr std::string_view kWhat = "RunnerFailureRule";
  if (!value.is_object()) return InvalidInput{"RunnerFailureRule JSON must be an object"};
  RunnerFailureRule rule;
  auto fatal = string_array(value, "fatalSignatures", kWhat);
  if (!fatal) return fatal.error();
  rule.fatal_signatures = std::move(fatal).value();
  if (value.contains("allowedExitCodes")) {
    auto codes = int_array(value, "allowedExitCodes", kWhat);
    if (!codes) return codes.error();
    rule.allowed_exit_codes = std::move(codes).value();
  }
  if (value.contains("informationalLines")) {
    auto lines = string_array(value, "informationalLines", kWhat);
    if (!lines) return lines.error();
    rule.informational_lines = std::move(lines).value();
  }
  return rule;
}

namespace {

// "providedFds": [{"fd": N, "purpose": "...", "contentBase64": "..."}], optional.
Result<ConfinedArgv> read_provided_fds(const json& value, ConfinedArgv confined) {
  constexpr std::string_view kWhat = "ConfinedArgv";
  const auto fds = value.find("providedFds");
  if (fds == value.end()) return confined;
  if (!fds->is_array()) return field_error(kWhat, "providedFds", "must be an array of objects");
  for (const json& entry : *fds) {
    const auto number = entry.is_object() ? entry.find("fd") : entry.end();
    if (!entry.is_object() || number == entry.end() || !number->is_number_integer() ||
        number->get<long long>() < 0 || number->get<long long>() > INT32_MAX) {
      return field_error(kWhat, "providedFds", "must hold objects with a descriptor number \"fd\"");
    }
    auto purpose = string_field(entry, "purpose", "ConfinedArgv providedFds");
    if (!purpose) return purpose.error();
    auto encoded = string_field(entry, "contentBase64", "ConfinedArgv providedFds");
    if (!encoded) return encoded.error();
    std::optional<std::string> content = base64_decode(encoded.value());
    if (!content) {
      return field_error(kWhat, "providedFds", "has a contentBase64 that is not base64");
    }
    confined.provided_fds.push_back(
        {number->get<int>(), std::move(content).value(), std::move(purpose).value()});
  }
  return confined;
}

std::optional<RunnerLayer> layer_named(const json& value) {
  if (!value.is_string()) return std::nullopt;
  for (const RunnerLayer layer :
       {RunnerLayer::kBwrap, RunnerLayer::kLandlockRun, RunnerLayer::kRunnerCommand,
        RunnerLayer::kSeatbelt, RunnerLayer::kWindowsAcl, RunnerLayer::kNetProxy,
        RunnerLayer::kSeccompExec}) {
    if (value.get<std::string>() == layer_name(layer)) return layer;
  }
  return std::nullopt;
}

std::optional<StatusFormat> format_named(const json& value) {
  if (!value.is_string()) return std::nullopt;
  for (const StatusFormat format :
       {StatusFormat::kBwrapJson, StatusFormat::kLauncherLines, StatusFormat::kProxyLines}) {
    if (value.get<std::string>() == status_format_name(format)) return format;
  }
  return std::nullopt;
}

// "layers": ["bwrap", "landlock-run"], optional.
Result<ConfinedArgv> read_layers(const json& value, ConfinedArgv confined) {
  constexpr std::string_view kWhat = "ConfinedArgv";
  const auto layers = value.find("layers");
  if (layers == value.end()) return confined;
  if (!layers->is_array()) return field_error(kWhat, "layers", "must be an array of runner names");
  for (const json& entry : *layers) {
    const std::optional<RunnerLayer> layer = layer_named(entry);
    if (!layer) {
      return field_error(kWhat, "layers",
                         "must hold bwrap, landlock-run, runner-command, seatbelt or windows-acl");
    }
    confined.layers.push_back(*layer);
  }
  return confined;
}

// "statusChannels": [{"fd": N, "layer": "bwrap", "format": "bwrap-json"}], optional.
Result<ConfinedArgv> read_status_channels(const json& value, ConfinedArgv confined) {
  constexpr std::string_view kWhat = "ConfinedArgv";
  const auto channels = value.find("statusChannels");
  if (channels == value.end()) return confined;
  if (!channels->is_array()) {
    return field_error(kWhat, "statusChannels", "must be an array of objects");
  }
  for (const json& entry : *channels) {
    const auto number = entry.is_object() ? entry.find("fd") : entry.end();
    if (!entry.is_object() || number == entry.end() || !number->is_number_integer() ||
        number->get<long long>() < 0 || number->get<long long>() > INT32_MAX) {
      return field_error(kWhat, "statusChannels",
                         "must hold objects with a descriptor number \"fd\"");
    }
    const std::optional<RunnerLayer> layer =
        entry.contains("layer") ? layer_named(entry["layer"]) : std::nullopt;
    const std::optional<StatusFormat> format =
        entry.contains("format") ? format_named(entry["format"]) : std::nullopt;
    if (!layer || !format) {
      return field_error(kWhat, "statusChannels",
                         "must hold objects naming a runner \"layer\" and a \"format\" "
                         "(bwrap-json or launcher-lines)");
    }
    confined.status_channels.push_back({number->get<int>(), *layer, *format});
  }
  return confined;
}

// The extension fields; each is optional so the reference's JSON parses too.
Result<ConfinedArgv> read_facts(const json& value, ConfinedArgv confined) {
  constexpr std::string_view kWhat = "ConfinedArgv";
  if (value.contains("backend")) {
    auto backend = string_field(value, "backend", kWhat);
    if (!backend) return backend.error();
    confined.backend = std::move(backend).value();
  }
  if (value.contains("ungoverned")) {
    auto ungoverned = string_array(value, "ungoverned", kWhat);
    if (!ungoverned) return ungoverned.error();
    confined.ungoverned = std::move(ungoverned).value();
  }
  // Absent (the reference's document): the strict reading of what it does say.
  confined.strict_enforcement = strict_reading(confined.enforcement, confined.ungoverned);
  if (value.contains("strictEnforcement")) {
    auto name = string_field(value, "strictEnforcement", kWhat);
    if (!name) return name.error();
    auto strict = parse_sandbox_enforcement(name.value());
    if (!strict) return strict.error();
    if (strict.value() != confined.strict_enforcement) {
      return field_error(kWhat, "strictEnforcement",
                         "must be partial exactly when enforcement is partial or ungoverned is "
                         "not empty");
    }
  }
  auto network = network_field(value, kWhat, NetworkPolicy::kInherit);
  if (!network) return network.error();
  confined.network = network.value();
  if (value.contains("refused")) {
    auto refused = string_array(value, "refused", kWhat);
    if (!refused) return refused.error();
    confined.refused = std::move(refused).value();
  }
  auto with_fds = read_provided_fds(value, std::move(confined));
  if (!with_fds) return with_fds.error();
  auto with_layers = read_layers(value, std::move(with_fds).value());
  if (!with_layers) return with_layers.error();
  return read_status_channels(value, std::move(with_layers).value());
}

}  // namespace

Result<ConfinedArgv> confined_argv_from_value(const json& value) {
  constexpr std::string_view kWhat = "ConfinedArgv";
  if (auto object = object_of(value, kWhat); !object) return object.error();
  ConfinedArgv confined;
  auto argv = string_array(value, "argv", kWhat);
  if (!argv) return argv.error();
  confined.argv = std::move(argv).value();
  auto enforcement_name = string_field(value, "enforcement", kWhat);
  if (!enforcement_name) return enforcement_name.error();
  auto enforcement = parse_sandbox_enforcement(enforcement_name.value());
  if (!enforcement) return enforcement.error();
  confined.enforcement = enforcement.value();
  auto signatures = string_array(value, "denialSignatures", kWhat);
  if (!signatures) return signatures.error();
  confined.denial_signatures = std::move(signatures).value();
  const auto rules = value.find("runnerFailureRules");
  if (rules == value.end() || !rules->is_array()) {
    return field_error(kWhat, "runnerFailureRules", "must be an array of rules");
  }
  for (const json& rule_value : *rules) {
    auto rule = runner_failure_rule_from_value(rule_value);
    if (!rule) return rule.error();
    confined.runner_failure_rules.push_back(std::move(rule).value());
  }
  return read_facts(value, std::move(confined));
}

Result<SandboxPolicy> sandbox_policy_from_value(const json& value) {
  constexpr std::string_view kWhat = "SandboxPolicy";
  if (auto object = object_of(value, kWhat); !object) return object.error();
  auto mode_name = string_field(value, "mode", kWhat);
  if (!mode_name) return mode_name.error();
  auto mode = parse_confined_sandbox_mode(mode_name.value());
  if (!mode) return mode.error();
  auto root = string_field(value, "workspaceRoot", kWhat);
  if (!root) return root.error();
  SandboxPolicy policy{mode.value(), std::move(root).value(), std::nullopt};
  if (value.contains("sessionId")) {
    auto session = string_field(value, "sessionId", kWhat);
    if (!session) return session.error();
    policy.session_id = std::move(session).value();
  }
  auto network = network_field(value, kWhat, NetworkPolicy::kDeny);
  if (!network) return network.error();
  policy.network = network.value();
  // networkAllow, networkDeny and networkResolve: optional string arrays, canonicalised here
  // once (validate_policy then holds every later reader to the canonical spelling).
  for (auto [key, field] : {std::pair{"networkAllow", &policy.network_allow.allow},
                            std::pair{"networkDeny", &policy.network_allow.deny},
                            std::pair{"networkResolve", &policy.network_allow.resolve}}) {
    if (!value.contains(key)) continue;
    auto entries = string_array(value, key, kWhat);
    if (!entries) return entries.error();
    for (const std::string& entry : entries.value()) {
      auto canonical = std::string_view(key) == "networkResolve" ? canonical_network_resolve(entry)
                                                                 : canonical_network_entry(entry);
      if (!canonical) return canonical.error();
      field->push_back(std::move(canonical).value());
    }
  }
  for (const auto& [field, out] :
       {std::pair<const char*, std::vector<std::string>*>{"allowWrite", &policy.allow_write},
        {"denyWrite", &policy.deny_write},
        {"denyRead", &policy.deny_read},
        {"allowCache", &policy.allow_cache},
        {"allowUnixSockets", &policy.network_allow.unix_sockets}}) {
    if (!value.contains(field)) continue;
    auto read = string_array(value, field, kWhat);
    if (!read) return read.error();
    *out = std::move(read).value();
  }
  if (auto valid = validate_policy(policy); !valid) return valid.error();
  return policy;
}

Result<std::string> dump(const json& value) {
  try {
    return value.dump();
  } catch (const json::type_error& error) {
    return InvalidInput{fmt::format(
        "cannot write JSON: a string is not valid UTF-8 ({}); JSON cannot carry it unchanged",
        error.what())};
  }
}

Result<json> parse(std::string_view text, std::string_view what) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& error) {
    return InvalidInput{fmt::format("{} JSON is malformed: {}", what, error.what())};
  } catch (const json::out_of_range& error) {
    // A number beyond a double's range (1e400) is valid JSON nlohmann cannot hold.
    return InvalidInput{fmt::format("{} JSON has a number out of range: {}", what, error.what())};
  }
}

}  // namespace json

Result<std::string> to_json(const ConfinedArgv& confined) {
  return json::dump(json::to_value(confined));
}

Result<std::string> to_json(const SandboxPolicy& policy) {
  return json::dump(json::to_value(policy));
}

Result<ConfinedArgv> confined_argv_from_json(std::string_view text) {
  auto value = json::parse(text, "ConfinedArgv");
  if (!value) return value.error();
  return json::confined_argv_from_value(value.value());
}

Result<SandboxPolicy> sandbox_policy_from_json(std::string_view text) {
  auto value = json::parse(text, "SandboxPolicy");
  if (!value) return value.error();
  return json::sandbox_policy_from_value(value.value());
}

}  // namespace dsh::sandbox
