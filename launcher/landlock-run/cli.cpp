// SPDX-License-Identifier: Apache-2.0
// Table-driven parser for the launcher grammar in cli.h. Pure: it only reads argv and writes
// the Options it returns (and the caller's grant storage).
#include "cli.h"

#include <stdio.h>
#include <string.h>

namespace landlock_run {
namespace {

enum class Arity { kFlag, kPath, kNumber };

// Applies a flag; `value` is null for kFlag. Returns false when the flag may not repeat.
using ApplyFn = bool (*)(Options& options, const char* value, int number);

struct FlagSpec {
  const char* name;
  Arity arity;
  ApplyFn apply;
};

bool add_ro(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false};
  return true;
}
bool add_ro_try(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, true};
  return true;
}
bool add_list(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, true, Note::kNone, false, true};
  return true;
}
bool add_rw(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, true};
  return true;
}
bool add_note_read_only(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, false, Note::kReadOnly};
  return true;
}
bool add_note_unreadable(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, false, Note::kUnreadable};
  return true;
}
bool add_guard_read_only(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, false, Note::kReadOnly, true};
  return true;
}
bool add_guard_unreadable(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, false, Note::kUnreadable, true};
  return true;
}
bool add_allow_unix_socket(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, false, Note::kUnixSocket};
  return true;
}

bool add_rule_home(Options& o, const char* value, int) {
  o.grants[o.grant_count++] = Grant{value, false, false, Note::kHome};
  return true;
}
// Boolean switches are idempotent: repeating one asks for nothing new.
bool set_deny_network(Options& o, const char*, int) { return o.deny_network = true; }
bool set_private_netns(Options& o, const char*, int) { return o.private_netns = true; }
bool set_deny_metadata(Options& o, const char*, int) { return o.deny_metadata = true; }
bool set_scope_ipc(Options& o, const char*, int) { return o.scope_ipc = true; }
bool set_evidence(Options& o, const char*, int) { return o.evidence = true; }
bool set_contain_metadata(Options& o, const char*, int) { return o.contain_metadata = true; }
bool set_rule_writes(Options& o, const char*, int) { return o.rule_writes = true; }
// A second fd or cap would silently override the first: refuse rather than guess.
bool set_status_fd(Options& o, const char*, int n) {
  if (o.status_fd >= 0) return false;
  o.status_fd = n;
  return true;
}
#if defined(LANDLOCK_RUN_TESTING)
bool set_max_abi(Options& o, const char*, int n) {
  if (o.max_abi >= 0) return false;
  o.max_abi = n;
  return true;
}
#endif

bool set_chdir(Options& o, const char* value, int) {
  if (o.chdir_path != nullptr) return false;
  o.chdir_path = value;
  return true;
}

bool set_allow_connect_port(Options& o, const char*, int n) {
  if (o.allow_connect_port >= 0) return false;
  o.allow_connect_port = n;
  return true;
}

constexpr FlagSpec kFlags[] = {
    {"--ro", Arity::kPath, add_ro},
    {"--rw", Arity::kPath, add_rw},
    {"--ro-try", Arity::kPath, add_ro_try},
    {"--list", Arity::kPath, add_list},
    {"--deny-network", Arity::kFlag, set_deny_network},
    {"--private-netns", Arity::kFlag, set_private_netns},
    {"--deny-metadata", Arity::kFlag, set_deny_metadata},
    {"--scope-ipc", Arity::kFlag, set_scope_ipc},
    {"--evidence", Arity::kFlag, set_evidence},  // supervisor.h
    {"--note-read-only", Arity::kPath, add_note_read_only},
    {"--note-unreadable", Arity::kPath, add_note_unreadable},
    {"--guard-read-only", Arity::kPath, add_guard_read_only},
    {"--guard-unreadable", Arity::kPath, add_guard_unreadable},
    {"--contain-metadata", Arity::kFlag, set_contain_metadata},
    {"--allow-unix-socket", Arity::kPath, add_allow_unix_socket},  // unix_connect.h
    {"--rule-writes", Arity::kFlag, set_rule_writes},              // write_rules.h
    {"--rule-home", Arity::kPath, add_rule_home},
    {"--status-fd", Arity::kNumber, set_status_fd},
#if defined(LANDLOCK_RUN_TESTING)
    // Lowers the ABI used, so tests can pose as an older kernel. Only the test build
    // (landlock-run-testing) knows it: it weakens enforcement, so the shipped launcher refuses
    // it as an unknown argument.
    {"--max-abi", Arity::kNumber, set_max_abi},
#endif
    {"--allow-connect-port", Arity::kNumber, set_allow_connect_port},
    {"--chdir", Arity::kPath, set_chdir},
};

const FlagSpec* find_flag(const char* arg) {
  for (const FlagSpec& spec : kFlags) {
    if (strcmp(spec.name, arg) == 0) return &spec;
  }
  return nullptr;
}

// Decimal, no sign, at most 9 digits so it always fits an int. Returns -1 when malformed.
int parse_number(const char* text) {
  const size_t length = strlen(text);
  if (length == 0 || length > 9) return -1;
  int value = 0;
  for (size_t i = 0; i < length; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool is_sole_only(const char* arg) {
  return strcmp(arg, "--probe") == 0 || strcmp(arg, "--features") == 0;
}

Options fail(Options options, UsageError error, const char* arg) {
  options.action = Action::kUsageError;
  options.error = error;
  options.error_arg = arg;
  return options;
}

}  // namespace

Options parse_args(int argc, const char* const* argv, Grant* grant_storage) {
  Options options;
  options.grants = grant_storage;
  // --probe and --features are valid only as the sole argument (argc == 2).
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    options.action = Action::kProbe;
    return options;
  }
  if (argc == 2 && strcmp(argv[1], "--features") == 0) {
    options.action = Action::kFeatures;
    return options;
  }
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      if (i + 1 >= argc) return fail(options, UsageError::kMissingCommand, nullptr);
      options.action = Action::kRun;
      options.command_index = i + 1;
      return options;
    }
    if (is_sole_only(arg)) return fail(options, UsageError::kProbeNotAlone, arg);
    const FlagSpec* spec = find_flag(arg);
    if (spec == nullptr) return fail(options, UsageError::kUnknownArgument, arg);
    const char* value = nullptr;
    int number = 0;
    if (spec->arity != Arity::kFlag) {
      if (i + 1 >= argc) return fail(options, UsageError::kMissingValue, spec->name);
      value = argv[++i];
      if (spec->arity == Arity::kNumber && (number = parse_number(value)) < 0) {
        return fail(options, UsageError::kBadNumber, spec->name);
      }
    }
    if (!spec->apply(options, value, number)) {
      return fail(options, UsageError::kRepeated, spec->name);
    }
  }
  return fail(options, UsageError::kMissingCommand, nullptr);  // no `--` at all
}

int format_usage_error(const Options& options, char* out, size_t size) {
  const char* arg = options.error_arg != nullptr ? options.error_arg : "";
  const FlagSpec* spec = find_flag(arg);
  const bool wants_path = spec != nullptr && spec->arity == Arity::kPath;
  switch (options.error) {
    case UsageError::kProbeNotAlone:
      return snprintf(out, size, "usage error: %s takes no other arguments", arg);
    case UsageError::kMissingValue:
      return snprintf(out, size, "usage error: %s requires a %s", arg,
                      wants_path ? "path" : "number");
    case UsageError::kBadNumber:
      return snprintf(out, size, "usage error: %s requires a number", arg);
    case UsageError::kRepeated:
      return snprintf(out, size, "usage error: %s given more than once", arg);
    case UsageError::kUnknownArgument:
      return snprintf(out, size, "usage error: unknown argument: %s", arg);
    case UsageError::kMissingCommand:
    case UsageError::kNone:
      break;
  }
  return snprintf(out, size, "usage error: missing `-- <argv>...` command");
}

void sanitize_line(char* text) {
  for (; *text != '\0'; ++text) {
    const unsigned char byte = static_cast<unsigned char>(*text);
    if (byte < 0x20 || byte == 0x7f) *text = '?';
  }
}

}  // namespace landlock_run
