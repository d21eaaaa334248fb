// SPDX-License-Identifier: Apache-2.0
// Everything `dsh-sandbox` prints for a caller to read, in one place: the failure line (and its
// JSON error object), the JSON of run (--json, the --json-lines stream, the fields the versioned
// contract adds), the policy a call runs under, probe's report, and the text a person is shown
// of a run's backend and enforcement.
#pragma once

#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/invocation.h"
#include "consumer/bash_executor.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/policy.h"

namespace dsh::sandbox::cli {

// The version of docs/schema/*.schema.json the objects follow.
inline constexpr int kSchemaVersion = 1;

// One "dsh-sandbox: <message>" line on stderr; returns kFailureExit. When the call asked for
// JSON, the error object (code: the seam's error code, or USAGE) is printed on stdout too.
int fail(const std::string& message, std::string_view code = "SANDBOX_INVALID_INPUT");

// Whether fail() prints the JSON error object too (the call asked for --json or --json-lines).
void set_json_errors(bool enabled);
bool json_errors();

// {"schemaVersion":1,"error":{"code":CODE,"message":MESSAGE}} (docs/schema/error.schema.json).
std::string error_json(std::string_view code, std::string_view message);

// `value` on one line of stdout, ASCII only: every control byte and every non-ASCII character
// is a \u escape (invalid UTF-8 replaced), so the object is safe on a terminal.
void print_json(const nlohmann::json& value);

// The effective policy after defaults as the `policy` JSON object; null when the policy cannot
// be made effective (confine and run then report that error themselves). run_policy_view: the
// same for a run, whose unconfined mode has only its mode and root.
nlohmann::json effective_policy_view(const SandboxPolicy& policy);
nlohmann::json run_policy_view(const SandboxExecutionPolicy& policy);

// run --json and --json-lines: the result object (with the contract's fields and `policy`), or,
// for a command that never ran, the object saying why (`refusal`, or `runnerFailed`).
void print_run_result(const RunInvocation& run, const consumer::RunSpec& spec,
                      const consumer::RunOutcome& outcome, int interrupted,
                      const nlohmann::json& policy_view);
void print_not_run(const RunInvocation& run, const consumer::RunSpec& spec,
                   const SandboxError& error, int interrupted);

// The --json-lines stream's first line, and one line per chunk of the command's output.
void print_started(const consumer::RunSpec& spec);
void print_output(std::string_view stream, std::string_view chunk);

// For --verbose: "mode workspace-write: backend bwrap+landlock (full enforcement), ...".
std::string backend_explanation(const consumer::RunOutcome& outcome);

// Why `backend` (a ConfinedArgv::backend label) confines the call: the config's runnerCommand,
// which replaces the chain, or the first backend of the chain that works here.
std::string backend_choice(std::string_view backend);

// What a person is shown of a run's enforcement: the strict reading, with the gaps when partial
// ("partial enforcement; ungoverned: A; B"), never a bare "partial".
std::string enforcement_text(SandboxEnforcement strict, std::span<const std::string> ungoverned);

// What probe found: the chain's reports, and why the selection refuses every call under the
// default policy when it does (then nothing confines a call from here as it stands).
struct ProbeVerdict {
  ProbeSummary summary;
  std::optional<std::string> default_refusal;
};

// probe: the JSON object (with the policy a call from here would have, `policy_view`), or the
// text a person reads, one backend and component per block, then the selection and the modes.
void print_probe(const ProbeVerdict& verdict, bool json, const nlohmann::json& policy_view);

}  // namespace dsh::sandbox::cli
