// SPDX-License-Identifier: Apache-2.0
#include "cli/habits.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <numeric>

#include "cli/version.h"

namespace dsh::sandbox::cli {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Every spelling of every option of `command`, with whether it takes a value.
std::vector<std::pair<std::string, bool>> option_names(const CLI::App& command) {
  std::vector<std::pair<std::string, bool>> names;
  for (const CLI::Option* option : command.get_options()) {
    const bool takes_value = option->get_items_expected_max() > 0;
    for (const std::string& name : option->get_lnames()) {
      names.emplace_back("--" + name, takes_value);
    }
    for (const std::string& name : option->get_snames()) {
      names.emplace_back("-" + name, takes_value);
    }
  }
  return names;
}

}  // namespace

std::string version_text() {
  std::string text = std::string("dsh-sandbox ") + kVersion;
  if (*kVersionDescribe != '\0') text += std::string(" (git ") + kVersionDescribe + ")";
  return text;
}

std::string help_footer() {
  return "Exit status of run: the command's own; 124 timed out; 125 the command did not run (no\n"
         "usable backend, runner failure, bad input: one 'dsh-sandbox:' line on stderr); 126/127\n"
         "not executable / not found; 128+N a signal. confine and probe: 0, or 125.\n"
         "Examples:\n"
         "  dsh-sandbox run --mode read-only -- ls\n"
         "  dsh-sandbox run --mode workspace-write --workspace ~/src/app -c 'make test'\n"
         "  dsh-sandbox run --json --network deny -- curl -sI https://example.com\n"
         "  dsh-sandbox confine --mode workspace-write -- bash -c 'npm test'\n"
         "  dsh-sandbox probe\n"
         "More: man dsh-sandbox, docs/contract.md, docs/schema/.";
}

std::optional<std::string> closest_name(std::string_view given,
                                        const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& name : known) {
    const std::size_t distance = edit_distance(given, name);
    if (!best || distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  // A typo: at most a third of the name changed (two letters swapped count as two).
  if (best && best_distance * 3 <= std::max<std::size_t>(given.size(), 3)) return best;
  return std::nullopt;
}

std::optional<std::string> unknown_flag(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* command = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return std::nullopt;
    if (!arg.starts_with('-') || arg == "-") {
      if (command == &app) {
        for (const CLI::App* sub : app.get_subcommands({})) {
          if (sub->get_name() == arg) command = sub;
        }
        if (command == &app) return std::nullopt;  // CLI11 names an unknown command itself
      }
      continue;
    }
    const std::string name = arg.substr(0, arg.find('='));
    std::vector<std::pair<std::string, bool>> names = option_names(*command);
    if (command != &app) {
      for (auto& global : option_names(app)) names.push_back(global);
    }
    const auto known = std::find_if(names.begin(), names.end(),
                                    [&](const auto& entry) { return entry.first == name; });
    if (known != names.end()) {
      // Its value follows, whatever it looks like; but `--` ends our options, so the option
      // lacks its value, which the parser reports.
      if (known->second && name == arg && i + 1 < args.size() && args[i + 1] == "--") break;
      if (known->second && name == arg) ++i;
      continue;
    }
    if (!name.starts_with("--") && name.size() > 2) continue;  // -abc: CLI11 judges it
    std::vector<std::string> spellings;
    spellings.reserve(names.size());
    for (const auto& entry : names) spellings.push_back(entry.first);
    std::string message = "unknown option " + name;
    if (command != &app) message += " for " + command->get_name();
    if (const auto suggestion = closest_name(name, spellings)) {
      message += "; did you mean " + *suggestion + "?";
    }
    return message;
  }
  return std::nullopt;
}

void parse_command_line(CLI::App& app, const std::vector<std::string>& args) {
  const auto separator = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> ours(args.begin(), separator);
  std::reverse(ours.begin(), ours.end());  // CLI11 takes the words last first
  app.parse(ours);
  if (separator == args.end() || separator + 1 == args.end()) return;
  const std::vector<std::string> command(separator + 1, args.end());
  for (CLI::App* parsed : app.get_subcommands()) {
    CLI::Option* positional = parsed->get_option_no_throw("argv");
    if (positional == nullptr) {
      throw CLI::ExtrasError(parsed->get_name() + " takes no command after --",
                             CLI::ExitCodes::ExtrasError);
    }
    positional->add_result(command);
    positional->run_callback();
    return;
  }
  throw CLI::ExtrasError(command);
}

bool wants_json(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "--json" || arg == "--json-lines") return true;
  }
  return false;
}

}  // namespace dsh::sandbox::cli
