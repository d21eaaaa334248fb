// SPDX-License-Identifier: Apache-2.0
#include "cli/run_options.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "consumer/render.h"
#include "dsh/sandbox/errors.h"

namespace dsh::sandbox::cli {

void apply_environment_options(const RunInvocation& run, exec::Request& process) {
  if (run.env_pass.empty() && run.env_unset.empty()) return;
  exec::EnvMap passed;
  for (const std::string& name : run.env_pass) {
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): one thread
    if (value == nullptr) {
      throw InvalidSandboxInputError(fmt::format(
          "run: --env {0}: {0} is not set in dsh-sandbox's environment; set it, or drop --env {0}",
          name));
    }
    passed.insert_or_assign(name, value);
  }
  std::vector<std::string> ambient;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    ambient.emplace_back(*entry);
  }
  exec::EnvMap whole;
  for (const std::string& entry : exec::build_environment(ambient, passed, process.env)) {
    const std::size_t eq = entry.find('=');
    whole.insert_or_assign(entry.substr(0, eq), entry.substr(eq + 1));
  }
  for (const std::string& name : run.env_unset) whole.erase(name);
  process.env = std::move(whole);
  process.inherit_env = false;
}

void add_contract_fields(nlohmann::json& result, const consumer::RunSpec& spec,
                         const consumer::RunOutcome& outcome) {
  const bool runner_failed = std::holds_alternative<consumer::status::RunnerFailed>(outcome.status);
  result["schemaVersion"] = kSchemaVersion;
  result["workspaceRoot"] = spec.policy.workspace_root;
  if (!result.contains("network")) result["network"] = std::string(wire_name(spec.policy.network));
  result["truncated"] = {{"stdout", !runner_failed && outcome.out.truncated},
                         {"stderr", !runner_failed && outcome.err.truncated}};
  const std::optional<std::string> not_started = consumer::start_failure(outcome);
  result["notStarted"] = not_started ? nlohmann::json(*not_started) : nlohmann::json(nullptr);
}

void JsonLines::emit(const nlohmann::json& line) {
  const std::lock_guard lock(mutex_);
  fmt::print("{}\n", line.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  (void)std::fflush(stdout);
}

void JsonLines::started(const consumer::RunSpec& spec) {
  emit({{"type", "started"},
        {"schemaVersion", kSchemaVersion},
        {"argv", spec.argv},
        {"mode", wire_name(spec.policy.mode)},
        {"workspaceRoot", spec.policy.workspace_root},
        {"network", std::string(wire_name(spec.policy.network))}});
}

void JsonLines::output(std::string_view stream, std::string_view chunk) {
  emit({{"type", std::string(stream)}, {"data", std::string(chunk)}});
}

void JsonLines::finished(const nlohmann::json& result, const consumer::RunOutcome& outcome) {
  for (const Denial& denial : outcome.sandbox.denials.records) {
    emit({{"type", "denial"},
          {"op", denial.op},
          {"rule", denial.rule},
          {"path", denial.path},
          {"pid", denial.pid ? nlohmann::json(*denial.pid) : nlohmann::json(nullptr)},
          {"exe", denial.exe}});
  }
  nlohmann::json exit = result;
  exit["type"] = "exit";
  emit(exit);
}

std::string backend_explanation(const consumer::RunOutcome& outcome) {
  const std::string_view mode = wire_name(outcome.sandbox.mode);
  if (outcome.sandbox.backend.empty()) {
    return fmt::format("mode {}: no backend; danger-full-access runs the command unconfined", mode);
  }
  return fmt::format(
      "mode {}: backend {} ({}), the first backend of this host's chain that works here (bwrap, "
      "then Landlock; `dsh-sandbox probe` shows each and why not)",
      mode, outcome.sandbox.backend,
      outcome.sandbox.strict_enforcement
          ? enforcement_text(*outcome.sandbox.strict_enforcement, outcome.sandbox.ungoverned)
          : "unknown enforcement");
}

std::string enforcement_text(SandboxEnforcement strict, std::span<const std::string> ungoverned) {
  if (ungoverned.empty()) return fmt::format("{} enforcement", wire_name(strict));
  return fmt::format("{} enforcement; ungoverned: {}", wire_name(strict),
                     fmt::join(ungoverned, "; "));
}

}  // namespace dsh::sandbox::cli
