// SPDX-License-Identifier: Apache-2.0
#include "cli/habits.h"

#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>

#include "base/text.h"
#include "cli/option_table.h"
#include "cli/version.h"

namespace dsh::sandbox::cli {

namespace {

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

// "unknown command rn; did you mean run?" for a first word that names no subcommand.
std::string unknown_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  std::string message = "unknown command " + text::quoted(word);
  if (const auto suggestion = text::closest(word, names)) {
    message += "; did you mean " + *suggestion + "?";
  }
  return message;
}

// The table's values of option `name`, when it lists them: "read-only workspace-write ...".
std::optional<std::vector<std::string>> listed_values(std::string_view name) {
  for (const TableOption& row : table_options()) {
    if (row.name != name || row.values.empty()) continue;
    std::vector<std::string> values;
    std::string_view rest = row.values;
    while (!rest.empty()) {
      const std::size_t end = rest.find(' ');
      values.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    return values;
  }
  return std::nullopt;
}

// Whether an option of the table takes a value (the word after it is that value).
bool takes_value(std::string_view name) {
  const auto rows = table_options();
  return std::any_of(rows.begin(), rows.end(),
                     [&](const TableOption& row) { return row.name == name && !row.arg.empty(); });
}

// `value` against `values`; a listed value ending in ':' ("allow:") admits every value it begins.
std::optional<std::string> value_error(const std::string& name, const std::string& value,
                                       const std::vector<std::string>& values) {
  for (const std::string& listed : values) {
    if (listed.ends_with(':') ? value.starts_with(listed) : value == listed) return std::nullopt;
  }
  std::vector<std::string> shown;
  shown.reserve(values.size());
  for (const std::string& listed : values) {
    shown.push_back(listed.ends_with(':') ? listed + "LIST" : listed);
  }
  std::string message =
      fmt::format("{} {}: expected {}", name, text::quoted(value), fmt::join(shown, ", "));
  if (const auto suggestion = text::closest(value, shown)) {
    message += "; did you mean " + name + " " + *suggestion + "?";
  }
  return message;
}

}  // namespace

std::optional<std::string> unknown_value(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (!name.starts_with('-') || !takes_value(name)) continue;
    std::optional<std::string> value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && args[i + 1] != "--") {
      value = args[++i];
    }
    const auto values = listed_values(name);
    if (!value || !values) continue;
    if (auto error = value_error(name, *value, *values)) return error;
  }
  return std::nullopt;
}

std::string flag_named(std::string_view message, const Options& options) {
  struct Field {
    std::string_view field;
    std::string_view flag;
    const std::vector<std::string>* values;
  };
  const std::array<Field, 3> fields = {{{"allow_write", "--allow-write", &options.allow_write},
                                        {"deny_write", "--deny-write", &options.deny_write},
                                        {"deny_read", "--deny-read", &options.deny_read}}};
  const char* home = std::getenv("HOME");  // NOLINT(concurrency-mt-unsafe): one thread here
  for (const Field& field : fields) {
    const std::string prefix = std::string(field.field) + " entry ";
    if (!message.starts_with(prefix)) continue;
    const std::string_view rest = message.substr(prefix.size());
    for (std::string value : *field.values) {
      const bool lift = value.starts_with('!');
      if (lift) value.erase(0, 1);
      if (value.starts_with("~/") && home != nullptr) value = home + value.substr(1);
      std::filesystem::path path(value);
      if (path.is_relative()) path = std::filesystem::current_path() / path;
      const std::string absolute = (lift ? "!" : "") + path.lexically_normal().string();
      if (rest.starts_with(text::quoted(absolute) + " ") ||
          rest.starts_with(text::quoted(absolute) + ":")) {
        return std::string(field.flag) + " " + std::string(rest);
      }
    }
  }
  return std::string(message);
}

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
  return text::closest(given, known);
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
        if (command == &app) return unknown_command(app, arg);
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
