// SPDX-License-Identifier: Apache-2.0
// dsh-sandbox: the CLI of the sandbox (docs/contract.md says what each command promises).
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <exception>

#include "cli/command_line.h"
#include "cli/habits.h"
#include "cli/output.h"
#include "seam/call_scope.h"

namespace {

int run(int argc, char** argv) {
  const dsh::sandbox::CallScope call;  // one walk per file this call checks (seam/call_scope.h)
  const std::vector<std::string> args(argv + 1, argv + argc);
  dsh::sandbox::cli::CommandLine command_line(args);
  CLI::App& app = command_line.app();
  dsh::sandbox::cli::set_json_errors(dsh::sandbox::cli::wants_json(args));
  if (args.empty()) {  // a bare `dsh-sandbox` asks what it can do: the help, as --help
    fmt::print("{}", app.help());
    return 0;
  }
  for (const auto& unknown :
       {dsh::sandbox::cli::unknown_flag(app, args), dsh::sandbox::cli::unknown_value(args)}) {
    if (unknown) return dsh::sandbox::cli::fail(*unknown + "; see dsh-sandbox --help", "USAGE");
  }
  try {
    dsh::sandbox::cli::parse_command_line(app, args);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    return dsh::sandbox::cli::fail(std::string(error.what()) + "; see dsh-sandbox --help", "USAGE");
  }
  return command_line.dispatch();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    // Fail closed on anything unexpected: nothing was printed for a caller to run.
    return dsh::sandbox::cli::fail(error.what());
  }
}
