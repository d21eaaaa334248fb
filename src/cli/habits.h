// SPDX-License-Identifier: Apache-2.0
// What people expect of a command-line tool, kept out of the parser itself: --version, the help
// footer (defaults, exit statuses, examples), unknown flags named with the closest known one, and
// whether the call asked for JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/options.h"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}  // namespace CLI

namespace dsh::sandbox::cli {

// "dsh-sandbox 0.1.0 (git abb189f)" or "dsh-sandbox 0.1.0".
std::string version_text();

// The --help footer: exit statuses and examples (the defaults are on each option's line).
std::string help_footer();

// The closest of `known` to `given` by edit distance, when it is close enough to be a typo.
std::optional<std::string> closest_name(std::string_view given,
                                        const std::vector<std::string>& known);

// Before CLI11 sees the line: the first argument before `--` that looks like a flag but is no
// option of the subcommand it follows, as "unknown option --netwrok; did you mean --network?",
// or a first word that is no subcommand ("unknown command "rn"; did you mean run?"). CLI11
// alone would report the words after it as unexpected positionals instead.
std::optional<std::string> unknown_flag(const CLI::App& app, const std::vector<std::string>& args);

// Before CLI11 sees the line: the first value before `--` of an option whose values the table
// lists that is none of them, as "--mode "readonly": expected read-only, workspace-write,
// danger-full-access; did you mean --mode read-only?".
std::optional<std::string> unknown_value(const std::vector<std::string>& args);

// A policy error as the person wrote the value: "allow_write entry "/x" ..." (the library's
// field) becomes "--allow-write "/x" ..." when "/x" is, made absolute, a value of that flag in
// `options`; a value of the config's keeps the field's name.
std::string flag_named(std::string_view message, const Options& options);

// Parses `args` (the words after the program name) into `app`. The first `--` ends our options,
// whatever precedes it: CLI11 sees only the words before it, so neither an option that takes a
// value nor a repeatable one can take a word of the command's, and the words after it become,
// unchanged, the `argv` positional of the subcommand that was parsed. Throws what
// CLI::App::parse throws, and CLI::ExtrasError when that subcommand takes no command.
void parse_command_line(CLI::App& app, const std::vector<std::string>& args);

// True when `args` ask for JSON (--json or --json-lines before any `--`): fail() then also prints
// the error as a JSON object on stdout (output.h).
bool wants_json(const std::vector<std::string>& args);

}  // namespace dsh::sandbox::cli
