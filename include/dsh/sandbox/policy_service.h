// SPDX-License-Identifier: Apache-2.0
// SandboxPolicyService: which policy a call runs under. Precedence is
//   approved request mode > the session's last sandbox/mode event > the configured default,
// and the workspace root is an explicit root resolved for the call, else the session's immutable
// cwd, else the configured root, resolved realpath-first (an explicit root is already resolved:
// it is used as is). A session is a JSONL log file;
// the log is the store, so a mode switch written by any process takes effect at the next resolve.
// The CLI's open shells and running jobs of a session are held to it too: a switch that narrows
// the session below the mode one runs under ends its whole tree (docs/contract.md).
//
// Session log format: one JSON object per line, each terminated by "\n".
//   line 1, the header:  {"type":"session","version":1,"id":"<session id>","cwd":"<abs path>"}
//                        ("cwd" is omitted for a session created without one)
//   later lines, events: {"type":"<event type>","payload":{...}}
// The only event this component reads or writes is the reference's:
//   {"type":"sandbox/mode","payload":{"mode":"<mode>"}}
//   {"type":"sandbox/mode","payload":{"mode":"<mode>","source":"delegation"}}
// The audit trail (this project's extension; docs/trust.md): each confined or unconfined run
// appends one line saying what ran, under which mode, workspace and backend, and how it ended,
// or why the sandbox refused it:
//   {"type":"sandbox/run","payload":{"argv":[...],"mode":"<mode>","workspace":"<abs path>",
//     "backend":"<backend>"|null,"enforcement":"full"|"partial"|null,"exitCode":N|null,
//     "signal":"SIGKILL"|null,"timedOut":false,"denied":false,"denial":"<marker>"|null}}
//   {"type":"sandbox/refused","payload":{"argv":[...],"mode":"<mode>","workspace":"<abs path>",
//     "code":"SANDBOX_UNAVAILABLE"|"SANDBOX_INVALID_INPUT","reason":"<message>"}}
// Events of other types (a harness may share the log) are skipped, but every line must still be
// a JSON object with a string "type". Anything else is an error naming the file and the line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/denial.h"
#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/resolved_workspace.h"

namespace dsh::sandbox {

inline constexpr std::string_view kSessionHeaderType = "session";
inline constexpr int kSessionLogVersion = 1;
inline constexpr std::string_view kSandboxModeEventType = "sandbox/mode";
inline constexpr std::string_view kDelegationSource = "delegation";

// The payload of a sandbox/mode event: {mode, source?: "delegation"}.
struct SandboxModeEvent {
  SandboxMode mode = SandboxMode::kReadOnly;
  bool delegated = false;  // source: "delegation" (seeded from a parent session)

  bool operator==(const SandboxModeEvent&) const = default;
};

// The mode of the last event, or nullopt when there is none (the reference's fold).
std::optional<SandboxMode> effective_sandbox_mode(const std::vector<SandboxModeEvent>& events);

struct SessionLogOptions {
  // fsync(2) after every write. Off by default: an appended line is one write(2) to an O_APPEND
  // descriptor, so it survives a crash of this process (and never interleaves with another
  // writer's line), but only fsync makes it survive a power loss.
  bool fsync = false;
  // When set, the log decides runs only while no confined run could have written it: every
  // read and append first passes check_trusted_path against these roots (see trust.h; the
  // caller passes untrusted_roots of its workspace), else InvalidSandboxInputError saying to
  // keep the session outside the workspace and /tmp.
  std::optional<std::vector<std::string>> untrusted_roots;
};

inline constexpr std::string_view kSandboxRunEventType = "sandbox/run";
inline constexpr std::string_view kSandboxRefusedEventType = "sandbox/refused";

// What ran and how it ended: the payload of a sandbox/run event.
struct SandboxRunEvent {
  std::vector<std::string> argv;  // the command, as the caller gave it
  SandboxMode mode = SandboxMode::kReadOnly;
  std::string workspace_root;
  std::string backend;                     // empty: unconfined (danger-full-access)
  std::optional<std::string> enforcement;  // "full" or "partial"; nullopt when unconfined
  std::optional<int> exit_code;
  std::optional<std::string> signal;  // "SIGKILL"
  bool timed_out = false;
  bool denied = false;
  std::string denial;  // the denial marker shown, when denied
  // The kernel side's records (docs/evidence-and-network.md), whether or not the run counted as
  // denied.
  std::optional<DenialSource> denial_source;
  DenialEvidence denials;
  // A background job's lines (dsh-sandbox start): its handle, and "started" (written before the
  // command runs, so its workspace counts as written at once), then "completed" or "killed" at
  // settlement. Both nullopt for a foreground run, whose payload then has neither key.
  std::optional<std::string> job;
  std::optional<std::string> job_state;
};

// Why the sandbox refused to run a command: the payload of a sandbox/refused event.
struct SandboxRefusalEvent {
  std::vector<std::string> argv;
  SandboxMode mode = SandboxMode::kReadOnly;
  std::string workspace_root;
  std::string code;  // SANDBOX_UNAVAILABLE or SANDBOX_INVALID_INPUT
  std::string reason;
  std::optional<std::string> job;  // a background job's handle, when its runner failed
};

class SessionLog;
void record_run(const SessionLog& session, const SandboxRunEvent& event);
void record_refusal(const SessionLog& session, const SandboxRefusalEvent& event);

// A session backed by its JSONL log file. The object holds only the path and the immutable
// header; events are read from the file on every query, so a switch appended by another
// process (or another SessionLog on the same file) is seen at once.
// File errors throw InvalidSandboxInputError when the file is missing, unreadable or malformed
// (the caller named a bad file), and std::system_error when a write fails.
class SessionLog {
 public:
  // Creates the file (it must not exist; mode 0600) and writes the header. `id` is non-empty
  // and NUL-free; `cwd`, when given, is an absolute NUL-free path, recorded exactly as spelled.
  static SessionLog create(std::string path, std::string id,
                           std::optional<std::string> cwd = std::nullopt,
                           SessionLogOptions options = {});
  // Opens an existing log: reads and validates every line (resume after a restart).
  static SessionLog open(std::string path, SessionLogOptions options = {});

  const std::string& path() const noexcept { return path_; }
  const std::string& id() const noexcept { return id_; }
  const std::optional<std::string>& cwd() const noexcept { return cwd_; }
  // What every read and append is held to (its trust roots).
  const SessionLogOptions& options() const noexcept { return options_; }

  // Every sandbox/mode event in log order, read from the file now.
  std::vector<SandboxModeEvent> sandbox_mode_events() const;

  // The directories a confined run of this session could have written: its cwd and the
  // workspace of every workspace-write run it recorded, read from the file now.
  std::vector<std::string> written_workspaces() const;

 private:
  SessionLog(std::string path, std::string id, std::optional<std::string> cwd,
             SessionLogOptions options);
  void append(const SandboxModeEvent& event) const;

  void append_line(const std::string& line) const;

  friend void set_sandbox_mode(const SessionLog& session, SandboxMode mode);
  friend void record_run(const SessionLog& session, const SandboxRunEvent& event);
  friend void record_refusal(const SessionLog& session, const SandboxRefusalEvent& event);
  friend std::optional<SandboxMode> delegate_sandbox_mode(const SessionLog& parent,
                                                          const SessionLog& child);

  std::string path_;
  std::string id_;
  std::optional<std::string> cwd_;
  SessionLogOptions options_;
};

// The only write path: appends exactly one sandbox/mode event. It takes effect at the next
// resolve of this session; when it narrows the session, the CLI's open shells and running jobs
// of the session under a wider mode than `mode` are ended.
void set_sandbox_mode(const SessionLog& session, SandboxMode mode);

// Seeds a delegated child session with the parent's explicit override, tagged
// source "delegation", so the child cannot fall back to a wider default. Returns the seeded
// mode; appends nothing when the parent has no override.
std::optional<SandboxMode> delegate_sandbox_mode(const SessionLog& parent, const SessionLog& child);

struct SandboxPolicyConfig {
  // A wire name; validated at construction. read-only is the fail-safe default.
  std::string mode = "read-only";
  // The root for agentless calls and sessions without a cwd; nullopt: the process's working
  // directory at construction. A relative root is resolved against that directory.
  std::optional<std::string> workspace_root;

  bool operator==(const SandboxPolicyConfig&) const = default;
};

struct SandboxPolicyRequest {
  const SessionLog* session = nullptr;  // nullptr: an agentless call
  std::optional<SandboxMode> mode;      // an explicitly approved mode for this call only
  // An explicit workspace for this call, resolved by the caller (as `run` resolves --workspace
  // or the session's cwd): it wins over the session's recorded cwd, which a confined run must
  // never be able to redirect, and is used as is.
  std::optional<ResolvedWorkspace> workspace_root;
};

class SandboxPolicyService {
 public:
  // Throws InvalidSandboxInputError for an unknown mode (the message lists the valid ones) or a
  // root that is empty or contains a NUL byte.
  explicit SandboxPolicyService(const SandboxPolicyConfig& config = {});
  // The typed form: a default mode and a root the caller already resolved, used as is.
  SandboxPolicyService(SandboxMode default_mode, const ResolvedWorkspace& workspace_root);

  SandboxExecutionPolicy resolve(const SandboxPolicyRequest& request = {}) const;
  // The session's own override: the fold of its log, without the default.
  std::optional<SandboxMode> override_of(const SessionLog& session) const;
  // The model-visible `sandbox:policy` section for a session; empty without one.
  std::string policy_context(const SessionLog* session) const;

  SandboxMode default_mode() const noexcept { return default_mode_; }
  const std::string& workspace_root() const noexcept { return workspace_root_; }

 private:
  SandboxMode default_mode_;
  std::string workspace_root_;
};

// The exact `sandbox:policy` text for a resolved policy. It names the workspace root (JSON-quoted)
// under workspace-write and never a temp path, so it is byte-stable when TMPDIR changes.
std::string sandbox_policy_text(const SandboxExecutionPolicy& policy);

}  // namespace dsh::sandbox
