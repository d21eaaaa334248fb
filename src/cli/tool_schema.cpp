// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox tool-schema`: the bash tool definition a harness hands to a model, with the texts
// and the working-directory rule of the tool layer, as one JSON object any language can read.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/output.h"
#include "consumer/tool_schema.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "plan/config_files.h"

namespace dsh::sandbox::cli {

int tool_schema(const Options& options) {
  try {
    const plan::Setup setup = plan::load_setup(options.config_path, untrusted_roots(""));
    SandboxMode mode = setup.defaults.mode;
    if (!options.mode.empty()) {
      const Result<SandboxMode> parsed = parse_sandbox_mode(options.mode);
      if (!parsed) return fail(parsed.error().message);
      mode = parsed.value();
    }
    consumer::ToolComposition composition;
    if (!options.no_sandbox) composition.executor_mode = mode;
    if (!options.network.empty()) {
      auto network = parse_network_option(options.network);
      if (!network) return fail(network.error().message);
      composition.network = network.value().first;
    } else if (!setup.defaults.network_allow.empty()) {
      composition.network = NetworkPolicy::kAllowList;
    }
    Result<nlohmann::json> definition = consumer::bash_tool_definition(composition);
    if (!definition) return fail(definition.error().message);
    // The policy root: --workspace resolved, else the canonical working directory.
    const std::string root =
        options.workspace.empty() ? std::string() : resolve_workspace_root(options.workspace);
    definition.value()["workdir"] = policy::resolve_workdir(
        root, working_directory(),
        options.workdir.empty() ? std::nullopt : std::optional<std::string_view>(options.workdir));
    fmt::print("{}\n", definition.value().dump());
    return 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
