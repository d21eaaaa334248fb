// SPDX-License-Identifier: Apache-2.0
// The parts of `dsh-sandbox run` a harness drives it by: the command's environment (--env,
// --unset-env), the fields the versioned JSON contract adds to the result object, the JSON-lines
// stream (--json-lines), and the --verbose line naming the backend.
#pragma once

#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/invocation.h"
#include "consumer/bash_executor.h"

namespace dsh::sandbox::cli {

// The version of docs/schema/*.schema.json the objects follow.
inline constexpr int kSchemaVersion = 1;

// With --env or --unset-env, the command's whole environment computed here as exec would (the
// scrub and the non-interactive defaults), plus each --env NAME with its value in dsh-sandbox's
// own environment, minus each --unset-env NAME; `process` then inherits nothing else. Throws
// InvalidSandboxInputError for an --env NAME that is not set.
void apply_environment_options(const RunInvocation& run, exec::Request& process);

// Adds schemaVersion, workspaceRoot, network, truncated {stdout, stderr} and notStarted (why
// the command never started, or null) to the `--json` object of a run.
void add_contract_fields(nlohmann::json& result, const consumer::RunSpec& spec,
                         const consumer::RunOutcome& outcome);

// One JSON object per line on stdout, each with "type"; every line is flushed as written, so a
// reader sees it live. Thread-safe: output callbacks may come from exec's reader.
class JsonLines {
 public:
  void started(const consumer::RunSpec& spec);
  void output(std::string_view stream, std::string_view chunk);
  // The denial lines (one per kept record), then the exit line: the `--json` object.
  void finished(const nlohmann::json& result, const consumer::RunOutcome& outcome);

 private:
  void emit(const nlohmann::json& line);
  std::mutex mutex_;
};

// For --verbose: "dsh-sandbox: backend bwrap+landlock (full) for workspace-write: ...".
std::string backend_explanation(const consumer::RunOutcome& outcome);

// What a person is shown of a run's enforcement: the strict reading, with the gaps when partial
// ("partial enforcement; ungoverned: A; B"), never a bare "partial".
std::string enforcement_text(SandboxEnforcement strict, std::span<const std::string> ungoverned);

}  // namespace dsh::sandbox::cli
