// SPDX-License-Identifier: Apache-2.0
#include "cli/output.h"

#include <cstdio>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/text.h"
#include "consumer/render.h"
#include "local/probe_cache.h"
#include "policy/effective_policy.h"

namespace dsh::sandbox::cli {

namespace {

bool json_errors_enabled = false;

// One JSON object per line on stdout, each with "type"; every line is flushed as written, so a
// reader sees it live. Thread-safe: output callbacks may come from exec's reader.
class JsonLines {
 public:
  void emit(const nlohmann::json& line) {
    const std::lock_guard lock(mutex_);
    print_json(line);
    (void)std::fflush(stdout);
  }
  // The denial lines (one per kept record), then the exit line: the `--json` object.
  void finished(const nlohmann::json& result, const consumer::RunOutcome& outcome) {
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

 private:
  std::mutex mutex_;
};

JsonLines& json_lines() {
  static JsonLines lines;
  return lines;
}

// Adds schemaVersion, timeoutMs (the deadline; null: none), workspaceRoot, network, truncated
// {stdout, stderr} and notStarted (why the command never started, or null) to the `--json` object
// of a run.
void add_contract_fields(nlohmann::json& result, const consumer::RunSpec& spec,
                         const consumer::RunOutcome& outcome) {
  const bool runner_failed = std::holds_alternative<consumer::status::RunnerFailed>(outcome.status);
  result["schemaVersion"] = kSchemaVersion;
  result["timeoutMs"] = spec.process.no_deadline || !spec.process.timeout_ms
                            ? nlohmann::json(nullptr)
                            : nlohmann::json(static_cast<long long>(*spec.process.timeout_ms));
  result["workspaceRoot"] = spec.policy.workspace_root;
  if (!result.contains("network")) result["network"] = std::string(wire_name(spec.policy.network));
  result["truncated"] = {{"stdout", !runner_failed && outcome.out.truncated},
                         {"stderr", !runner_failed && outcome.err.truncated}};
  const std::optional<std::string> not_started = consumer::start_failure(outcome);
  result["notStarted"] = not_started ? nlohmann::json(*not_started) : nlohmann::json(nullptr);
}

// The result object on stdout, or as the stream's last lines.
void print_result(const RunInvocation& run, const nlohmann::json& result,
                  const consumer::RunOutcome& outcome) {
  if (run.json_lines) {
    json_lines().finished(result, outcome);
  } else {
    print_json(result);
  }
}

nlohmann::json modes_json(const std::vector<ModeEnforcement>& modes) {
  nlohmann::json value = nlohmann::json::array();
  for (const ModeEnforcement& mode : modes) {
    value.push_back({{"mode", wire_name(mode.mode)},
                     {"enforcement", wire_name(mode.enforcement)},
                     {"strictEnforcement", wire_name(mode.strict_enforcement)},
                     {"ungoverned", mode.ungoverned}});
  }
  return value;
}

// One line per mode, then one per gap: what confine answers for that mode, in the strict reading
// a person is shown (its "partial" always followed by the gaps).
void print_modes(const std::vector<ModeEnforcement>& modes, std::string_view indent) {
  for (const ModeEnforcement& mode : modes) {
    fmt::print("{}{:<16} {}\n", indent, wire_name(mode.mode), wire_name(mode.strict_enforcement));
    for (const std::string& gap : mode.ungoverned) fmt::print("{}  ungoverned: {}\n", indent, gap);
  }
}

// A backend's or a component's cause and fix, when it is unusable.
template <typename Report>
void add_why_unusable(nlohmann::json& value, const Report& report) {
  if (report.usable) return;
  value["cause"] = report.cause;
  value["fix"] = report.fix;
}

nlohmann::json report_json(const BackendReport& report) {
  nlohmann::json value = {{"backend", backend_name(report.backend)},
                          {"runner", report.runner},
                          {"probed", report.probed},
                          {"usable", report.usable}};
  if (report.usable) {
    value["enforcement"] = wire_name(report.enforcement);
    value["strictEnforcement"] = wire_name(report.strict_enforcement);
    value["modes"] = modes_json(report.modes);
  }
  if (report.backend == SandboxBackend::kLandlock && report.usable) {
    value["landlockAbi"] = report.landlock_abi;
  }
  add_why_unusable(value, report);
  return value;
}

void print_report(const BackendReport& report) {
  if (report.usable) {
    std::string abi;
    if (report.backend == SandboxBackend::kLandlock) {
      abi = fmt::format(" (Landlock ABI {})", report.landlock_abi);
    }
    fmt::print("{:<12} usable    {:<8} {}{}\n", backend_name(report.backend),
               wire_name(report.strict_enforcement), report.runner, abi);
    print_modes(report.modes, "  ");
    return;
  }
  fmt::print("{:<12} unusable           {}\n  cause: {}\n  fix:   {}\n",
             backend_name(report.backend), report.runner, report.cause, report.fix);
}

nlohmann::json component_json(const ComponentReport& report) {
  nlohmann::json value = {{"component", report.component},
                          {"feature", report.feature},
                          {"runner", report.runner},
                          {"probed", report.probed},
                          {"usable", report.usable}};
  add_why_unusable(value, report);
  return value;
}

// After the backends: the programs a feature starts on top of the selected backend.
void print_component(const ComponentReport& report) {
  if (report.usable) {
    fmt::print("{:<12} usable             {} ({})\n", report.component, report.runner,
               report.feature);
    return;
  }
  fmt::print("{:<12} unusable           {} ({})\n  cause: {}\n  fix:   {}\n", report.component,
             report.runner, report.feature, report.cause, report.fix);
}

void print_probe_json(const ProbeVerdict& verdict, const nlohmann::json& policy_view) {
  const ProbeSummary& summary = verdict.summary;
  nlohmann::json backends = nlohmann::json::array();
  for (const BackendReport& report : summary.backends) backends.push_back(report_json(report));
  // A selection that refuses every call under the default policy confines none of them.
  const nlohmann::json selected = summary.selected.empty() || verdict.default_refusal
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json(summary.selected);
  nlohmann::json components = nlohmann::json::array();
  for (const ComponentReport& report : summary.components) {
    components.push_back(component_json(report));
  }
  nlohmann::json value = {{"platform", summary.platform},       {"backends", backends},
                          {"components", components},           {"selected", selected},
                          {"modes", modes_json(summary.modes)}, {"policy", policy_view}};
  if (!summary.runner_command.empty()) value["runnerCommand"] = summary.runner_command;
  if (verdict.default_refusal) {
    value["defaultPolicyRefused"] = {{"backend", summary.selected},
                                     {"cause", *verdict.default_refusal}};
  }
  fmt::print("{}\n", value.dump());
}

}  // namespace

int fail(const std::string& message, std::string_view code) {
  if (json_errors()) fmt::print("{}\n", error_json(code, message));
  // The message is ours, but a runner's detail or a path in it may carry bytes a confined
  // command chose: one line, and nothing in it drives the terminal.
  std::string shown;
  for (const char c : text::inert_lines(message)) {
    shown += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  fmt::print(stderr, "dsh-sandbox: {}\n", shown);
  return kFailureExit;
}

void set_json_errors(bool enabled) { json_errors_enabled = enabled; }
bool json_errors() { return json_errors_enabled; }

std::string error_json(std::string_view code, std::string_view message) {
  const nlohmann::json object = {
      {"schemaVersion", 1},
      {"error", {{"code", std::string(code)}, {"message", std::string(message)}}}};
  return object.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

void print_json(const nlohmann::json& value) {
  fmt::print("{}\n", value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
}

nlohmann::json effective_policy_view(const SandboxPolicy& policy) {
  if (!validate_policy(policy)) return nullptr;
  policy::PathContext context = policy::process_path_context();
  context.create_missing = false;
  context.private_state = local::private_state_directories(false);
  auto effective = policy::effective_policy(policy, context);
  if (!effective) return nullptr;
  return policy::effective_policy_json(effective.value());
}

nlohmann::json run_policy_view(const SandboxExecutionPolicy& policy) {
  if (const auto confined = to_sandbox_policy(policy)) return effective_policy_view(*confined);
  return nlohmann::json{{"mode", wire_name(policy.mode)}, {"workspaceRoot", policy.workspace_root}};
}

void print_run_result(const RunInvocation& run, const consumer::RunSpec& spec,
                      const consumer::RunOutcome& outcome, int interrupted,
                      const nlohmann::json& policy_view) {
  nlohmann::json result = consumer::result_json(outcome, interrupted);
  add_contract_fields(result, spec, outcome);
  result["policy"] = policy_view;
  print_result(run, result, outcome);
}

void print_not_run(const RunInvocation& run, const consumer::RunSpec& spec,
                   const SandboxError& error, int interrupted) {
  const auto* unavailable = dynamic_cast<const SandboxUnavailableError*>(&error);
  const bool runner_failed = unavailable != nullptr && unavailable->detail();
  consumer::RunOutcome not_run;
  not_run.status = consumer::status::RunnerFailed{runner_failed ? *unavailable->detail() : ""};
  not_run.sandbox.mode = spec.policy.mode;
  nlohmann::json result = consumer::result_json(not_run, interrupted);
  add_contract_fields(result, spec, not_run);
  if (!runner_failed) {
    result["runnerFailed"] = false;
    result["refusal"] = {{"code", std::string(error.code())}, {"message", error.what()}};
  }
  print_result(run, result, not_run);
}

void print_started(const consumer::RunSpec& spec) {
  json_lines().emit({{"type", "started"},
                     {"schemaVersion", kSchemaVersion},
                     {"argv", spec.argv},
                     {"mode", wire_name(spec.policy.mode)},
                     {"workspaceRoot", spec.policy.workspace_root},
                     {"network", std::string(wire_name(spec.policy.network))}});
}

void print_output(std::string_view stream, std::string_view chunk) {
  json_lines().emit({{"type", std::string(stream)}, {"data", std::string(chunk)}});
}

std::string backend_choice(std::string_view backend) {
  if (backend == "runner-command") {
    return "the config's runnerCommand, which replaces this host's chain (bwrap, then Landlock) "
           "whatever else would work; `dsh-sandbox probe` shows it and the chain";
  }
  return "the first backend of this host's chain that works here (bwrap, then Landlock; "
         "`dsh-sandbox probe` shows each and why not)";
}

std::string backend_explanation(const consumer::RunOutcome& outcome) {
  const std::string_view mode = wire_name(outcome.sandbox.mode);
  if (outcome.sandbox.backend.empty()) {
    return fmt::format("mode {}: no backend; danger-full-access runs the command unconfined", mode);
  }
  return fmt::format(
      "mode {}: backend {} ({}), {}", mode, outcome.sandbox.backend,
      outcome.sandbox.strict_enforcement
          ? enforcement_text(*outcome.sandbox.strict_enforcement, outcome.sandbox.ungoverned)
          : "unknown enforcement",
      backend_choice(outcome.sandbox.backend));
}

std::string enforcement_text(SandboxEnforcement strict, std::span<const std::string> ungoverned) {
  if (ungoverned.empty()) return fmt::format("{} enforcement", wire_name(strict));
  return fmt::format("{} enforcement; ungoverned: {}", wire_name(strict),
                     fmt::join(ungoverned, "; "));
}

void print_probe(const ProbeVerdict& verdict, bool json, const nlohmann::json& policy_view) {
  if (json) {
    print_probe_json(verdict, policy_view);
    return;
  }
  const ProbeSummary& summary = verdict.summary;
  for (const BackendReport& report : summary.backends) print_report(report);
  for (const ComponentReport& report : summary.components) print_component(report);
  if (verdict.default_refusal) {
    fmt::print(
        "selected: none for a call from here under the default policy (SANDBOX_UNAVAILABLE): "
        "{} refuses it\n  cause: {}\n",
        summary.selected, *verdict.default_refusal);
  } else {
    fmt::print("selected: {}\n",
               summary.selected.empty() ? "none (SANDBOX_UNAVAILABLE)" : summary.selected);
  }
  if (!summary.runner_command.empty()) {
    fmt::print("  runnerCommand: {} (used instead of the chain)\n",
               fmt::join(summary.runner_command, " "));
  }
  print_modes(summary.modes, "  ");
}

}  // namespace dsh::sandbox::cli
