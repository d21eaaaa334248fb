// SPDX-License-Identifier: Apache-2.0
#include "commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/roots.h"
#include "json_codec.h"
#include "probe_cache.h"

namespace dsh::sandbox::cli {

namespace {

struct Setup {
  LocalSandboxConfig provider;
  SandboxMode mode = SandboxMode::kReadOnly;  // the fail-safe default
};

// The config file holds the provider's keys and the default mode.
Setup load_setup(const std::string& path) {
  Setup setup;
  if (path.empty()) return setup;
  std::ifstream file(path);
  if (!file) {
    throw InvalidSandboxInputError(
        fmt::format("config file \"{}\" cannot be read; check the path", path));
  }
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string text = contents.str();
  auto provider = config_from_json(text);
  if (!provider) {
    throw InvalidSandboxInputError(
        fmt::format("config file \"{}\": {}", path, provider.error().message));
  }
  setup.provider = std::move(provider).value();
  const nlohmann::json document = nlohmann::json::parse(text);
  if (document.contains("mode")) {
    const nlohmann::json& mode = document["mode"];
    if (!mode.is_string()) {
      throw InvalidSandboxInputError(
          fmt::format("config file \"{}\": mode must be a string", path));
    }
    setup.mode = parse_sandbox_mode(mode.get<std::string>()).value();
  }
  return setup;
}

// An absolute existing directory, resolved realpath-first.
std::string workspace_root(const std::string& given) {
  const std::string spelled = given.empty() ? working_directory() : given;
  if (spelled.empty() || spelled.front() != '/') {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" is not an absolute path; pass an absolute directory", spelled));
  }
  struct stat info {};
  if (::stat(spelled.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" is not an existing directory; create it or pass another", spelled));
  }
  return resolve_workspace_root(spelled);
}

SandboxPolicy confined_policy(const Options& options, SandboxMode default_mode) {
  const SandboxMode mode =
      options.mode.empty() ? default_mode : parse_sandbox_mode(options.mode).value();
  const std::optional<ConfinedSandboxMode> confined = to_confined_mode(mode);
  if (!confined) {
    throw InvalidSandboxInputError(
        "confine: danger-full-access runs the command unconfined; there is nothing to confine");
  }
  return {*confined, workspace_root(options.workspace), std::nullopt,
          parse_network_policy(options.network).value()};
}

LocalSandboxProvider make_provider(const LocalSandboxConfig& config) {
  return LocalSandboxProvider(config, {}, local::make_user_verdict_store(config));
}

nlohmann::json report_json(const BackendReport& report) {
  nlohmann::json value = {{"backend", backend_name(report.backend)},
                          {"runner", report.runner},
                          {"probed", report.probed},
                          {"usable", report.usable}};
  if (report.usable) value["enforcement"] = wire_name(report.enforcement);
  if (report.backend == SandboxBackend::kLandlock && report.usable) {
    value["landlockAbi"] = report.landlock_abi;
  }
  if (!report.usable) {
    value["cause"] = report.cause;
    value["fix"] = report.fix;
  }
  return value;
}

void print_report(const BackendReport& report) {
  if (report.usable) {
    std::string abi;
    if (report.backend == SandboxBackend::kLandlock) {
      abi = fmt::format(" (Landlock ABI {})", report.landlock_abi);
    }
    fmt::print("{:<12} usable    {:<8} {}{}\n", backend_name(report.backend),
               wire_name(report.enforcement), report.runner, abi);
    return;
  }
  fmt::print("{:<12} unusable           {}\n  cause: {}\n  fix:   {}\n",
             backend_name(report.backend), report.runner, report.cause, report.fix);
}

}  // namespace

int fail(const std::string& message) {
  fmt::print(stderr, "dsh-sandbox: {}\n", message);
  return kFailureExit;
}

int confine(const Options& options) {
  try {
    const Setup setup = load_setup(options.config_path);
    const SandboxPolicy policy = confined_policy(options, setup.mode);
    LocalSandboxProvider provider = make_provider(setup.provider);
    const ConfinedArgv confined = provider.confine(options.argv, policy);
    fmt::print("{}\n", json::dump(json::to_value(confined)).value());
    return 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

int probe(const Options& options) {
  try {
    const Setup setup = load_setup(options.config_path);
    LocalSandboxProvider provider(setup.provider);  // a probe always probes: no cache
    const ProbeSummary summary = provider.probe_all();
    if (options.json) {
      nlohmann::json backends = nlohmann::json::array();
      for (const BackendReport& report : summary.backends) backends.push_back(report_json(report));
      const nlohmann::json selected =
          summary.selected.empty() ? nlohmann::json(nullptr) : nlohmann::json(summary.selected);
      fmt::print("{}\n",
                 nlohmann::json{
                     {"platform", summary.platform}, {"backends", backends}, {"selected", selected}}
                     .dump());
    } else {
      for (const BackendReport& report : summary.backends) print_report(report);
      fmt::print("selected: {}\n",
                 summary.selected.empty() ? "none (SANDBOX_UNAVAILABLE)" : summary.selected);
    }
    return summary.selected.empty() ? kFailureExit : 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
