// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox config`: the settings a call from here starts from, each key's value and the file
// it came from (plan/config_files.h: system < user < --config; the call's flags then come last),
// read through the same trust checks as a call's. Runs nothing.
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/trust.h"
#include "plan/config_files.h"
#include "plan/setup.h"

namespace dsh::sandbox::cli {

namespace {

// Every key, in the order the docs list them, with its effective value.
std::vector<std::pair<std::string_view, nlohmann::ordered_json>> settings(
    const plan::Setup& setup) {
  const LocalSandboxConfig& provider = setup.provider;
  const policy::CallDefaults& defaults = setup.defaults;
  return {
      {"mode", std::string(wire_name(defaults.mode))},
      {"allowWrite", defaults.rules.allow_write},
      {"denyWrite", defaults.rules.deny_write},
      {"denyRead", defaults.rules.deny_read},
      {"allowCache", defaults.rules.allow_cache},
      {"networkAllow", defaults.network_allow},
      {"networkDeny", defaults.network_deny},
      {"allowUnixSockets", defaults.unix_sockets},
      {"runnerCommand", provider.runner_command},
      {"runnerFailureSignatures", provider.runner_failure_signatures},
      {"runnerAcceptsHardening", provider.runner_accepts_hardening},
      {"probeTimeoutMs", provider.probe_timeout_ms},
      {"bwrapPath", provider.bwrap_path},
  };
}

nlohmann::ordered_json as_json(const plan::Setup& setup, const std::vector<plan::ConfigFile>& files,
                               const std::vector<plan::ConfigFile>& consulted) {
  nlohmann::ordered_json out{{"files", nlohmann::ordered_json::array()},
                             {"settings", nlohmann::ordered_json::object()}};
  for (const plan::ConfigFile& file : files) {
    bool read = false;
    for (const plan::ConfigFile& used : consulted) read = read || used.path == file.path;
    out["files"].push_back({{"origin", file.origin}, {"path", file.path}, {"read", read}});
  }
  for (auto& [key, value] : settings(setup)) {
    const auto origin = setup.origins.find(std::string(key));
    out["settings"][std::string(key)] = {
        {"value", std::move(value)},
        {"from", origin == setup.origins.end() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(origin->second)}};
  }
  return out;
}

void print_text(const nlohmann::ordered_json& view) {
  for (const nlohmann::ordered_json& file : view["files"]) {
    fmt::print("# {} file {}: {}\n", file["origin"].get<std::string>(),
               text::quoted(file["path"].get<std::string>()),
               file["read"].get<bool>() ? "read" : "absent");
  }
  for (const auto& [key, setting] : view["settings"].items()) {
    const nlohmann::ordered_json& from = setting["from"];
    fmt::print("{} = {}  # {}\n", key, setting["value"].dump(),
               from.is_null() ? std::string("default") : text::quoted(from.get<std::string>()));
  }
}

}  // namespace

int config(const Options& options) {
  try {
    // The roots a call from here would hold the files to before its workspace is resolved: the
    // workspace as spelled, /tmp, $TMPDIR and every root the per-user record lists.
    const std::vector<std::string> spelled = plan::spelled_workspace_roots(options.workspace);
    std::vector<std::string> roots = spelled;
    const plan::RecordedWorkspaces recorded = plan::recorded_workspaces(spelled);
    roots.insert(roots.end(), recorded.roots.begin(), recorded.roots.end());
    const std::vector<plan::ConfigFile> files = plan::config_files(options.config_path);
    std::vector<plan::ConfigFile> consulted;
    const plan::Setup setup = plan::load_setup(files, untrusted_roots("", roots), &consulted);
    const nlohmann::ordered_json view = as_json(setup, files, consulted);
    if (options.json) {
      fmt::print("{}\n", view.dump());
    } else {
      print_text(view);
    }
    return 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
