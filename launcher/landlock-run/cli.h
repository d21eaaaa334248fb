// SPDX-License-Identifier: Apache-2.0
// The launcher's argument grammar, PURE (no I/O, no allocation), so a unit test and a fuzzer can
// drive it. Grammar:
//   landlock-run [--ro P]... [--ro-try P]... [--list P]... [--rw P]...
//                [--deny-network] [--deny-metadata] [--scope-ipc]
//                [--evidence] [--status-fd N] [--allow-connect-port N] [--chdir DIR]
//                [--note-read-only P]... [--note-unreadable P]...
//                [--guard-read-only P]... [--guard-unreadable P]... [--contain-metadata]
//                [--allow-unix-socket P]... [--rule-writes] [--rule-home DIR]...
//                -- ARGV...
//   (the test build landlock-run-testing also takes [--max-abi N], a cap on the ABI used)
//   landlock-run --probe        (sole argument)
//   landlock-run --features     (sole argument; key=value capability lines, an extension)
// Options come in any order before the first bare `--`; nothing after it is parsed. --ro and
// --rw take the next argument as a path whatever it is, `--` included, as the reference does.
#pragma once

#include <stddef.h>

namespace landlock_run {

enum class Action { kRun, kProbe, kFeatures, kUsageError };

enum class UsageError {
  kNone,
  kProbeNotAlone,    // "--probe takes no other arguments" (also --features)
  kMissingValue,     // "<flag> requires a path" / "requires a number"
  kBadNumber,        // "<flag> requires a number: <arg>"
  kRepeated,         // "<flag> given more than once"
  kUnknownArgument,  // "unknown argument: <arg>"
  kMissingCommand,   // "missing `-- <argv>...` command"
};

// --note-read-only and --note-unreadable (evidence only, with --evidence): a path an outer layer
// or this launcher's own grants already keep read-only or unreadable. It grants nothing and
// refuses nothing; the supervisor records the refusals the kernel makes there (supervisor.h).
// --guard-read-only and --guard-unreadable: the same, for a path nothing else refuses (inside a
// --rw grant, which Landlock cannot carve out): the supervisor refuses the calls there itself.
// --allow-unix-socket: not a path rule either; a socket the supervisor lets the command connect to
// with the network off or allow-listed (unix_connect.h).
// --rule-home (with --rule-writes): a home whose dot-entries the supervisor keeps read-only
// (write_rules.h); like a note it grants nothing.
enum class Note { kNone, kReadOnly, kUnreadable, kUnixSocket, kHome };

struct Grant {
  const char* path;
  bool read_write;
  // --ro-try: a path that no longer exists grants nothing instead of failing the run (a read
  // grant of a missing path would grant nothing anyway; the caller lists a directory's entries,
  // and one may vanish before the launcher starts).
  bool if_exists = false;
  Note note = Note::kNone;  // not a grant: a path the supervisor watches
  bool guard = false;       // and refuses (--guard-*)
  // --list: Landlock's READ_DIR alone, so the directory and every directory beneath it can be
  // opened and listed while the files in them stay unreadable unless another grant covers them
  // (READ_FILE and READ_DIR are separate rights since ABI 1). A path that no longer exists, or
  // that is not a directory, grants nothing.
  bool list_only = false;
};

struct Options {
  Action action = Action::kUsageError;
  UsageError error = UsageError::kNone;
  const char* error_arg = nullptr;  // the offending flag or argument, for the message
  Grant* grants = nullptr;          // caller-provided storage, argc entries suffice
  size_t grant_count = 0;
  bool deny_network = false;
  bool private_netns = false;  // --private-netns: the caller gave this run its own netns
  bool deny_metadata = false;
  bool scope_ipc = false;
  bool evidence = false;  // fork a supervisor that records refusals on the status fd
  // with evidence: the supervisor performs chmod, chown, utimes and xattr calls inside the --rw
  // grants and refuses them outside (supervisor.h)
  bool contain_metadata = false;
  // with evidence: the supervisor performs every write-class call beneath the --rw grants itself,
  // after the rules of write_rules.h (git directories, --rule-home homes), and refuses the rest
  bool rule_writes = false;
  int status_fd = -1;           // set as soon as parsed, so later usage errors can use it
  int max_abi = -1;             // test build only (--max-abi); -1 means "the kernel's ABI"
  int allow_connect_port = -1;  // --allow-connect-port N (net_allow.h); -1: not given
  // --chdir DIR: the directory the command starts in, entered before anything is confined (so
  // the printed argv runs where bwrap's --chdir would start it); null: the caller's.
  const char* chdir_path = nullptr;
  int command_index = 0;  // argv[command_index] is the command's argv[0]
};

// Parses argv[1..argc). `grant_storage` must hold at least `argc` entries (or be null when
// argc <= 1). Never reads argv beyond argc, never writes beyond argc grants.
Options parse_args(int argc, const char* const* argv, Grant* grant_storage);

// The text after "landlock-run: " for a usage error (one line, no newline), written into `out`.
// Returns the formatted length (snprintf semantics).
int format_usage_error(const Options& options, char* out, size_t size);

// Replaces every control byte in the NUL-terminated `text` with '?', so a path or argument that
// contains a newline can never turn the one failure line into two (or forge a second one).
void sanitize_line(char* text);

}  // namespace landlock_run
