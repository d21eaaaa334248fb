// SPDX-License-Identifier: Apache-2.0
// Escalation, shared by the bash and fs tools: after a denial the model may ask to
// retry one call under a strictly wider mode, with a justification, and a person approves it.
// The sequence is fail-closed and runs before anything executes; a grant applies to that one
// call and is never persisted (nothing here writes a session log).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

// The closed schema enum of sandbox_permissions; read-only is the floor, never a target.
inline constexpr std::array<SandboxMode, 2> kEscalationTargets = {SandboxMode::kWorkspaceWrite,
                                                                  SandboxMode::kDangerFullAccess};

// WIDER_MODES: read-only -> [workspace-write, danger-full-access]; workspace-write ->
// [danger-full-access]; danger-full-access -> nothing.
std::span<const SandboxMode> wider_modes(SandboxMode mode) noexcept;
// By wire name, for a mode read from elsewhere: an unknown name widens to nothing, so every
// escalation from it fails as not strictly wider.
std::span<const SandboxMode> wider_modes(std::string_view mode) noexcept;

// The pairing rules, checked in the reference's order with its exact texts:
//  1. permissions without a justification; 2. a justification without permissions;
//  3. a whitespace-only justification.
Result<void> validate_escalation_args(std::optional<SandboxMode> permissions,
                                      std::optional<std::string_view> justification);

// "[sandbox: file access denied under <mode> mode]"
std::string sandbox_denial_marker(SandboxMode mode);
// The hint after a denial; `subject` is "command" for bash and "operation" for fs.
std::string escalation_hint_marker(std::string_view subject);

enum class EscalationOutcome {
  kAllowedOnce,  // "allowed-once"
  kRejected,     // "rejected"
  kCancelled,    // "cancelled"
  kUnavailable,  // "unavailable": no channel reached a person
};

std::string_view wire_name(EscalationOutcome outcome);

// What the approver is asked. `reason` is "escalate sandbox to <mode>: <justification>"; a
// harness stores it in its approval/asked audit event.
struct ApprovalRequest {
  std::string agent;
  std::string tool_name;
  std::string call_id;
  std::string reason;
  std::optional<std::stop_token> signal;  // the call's cancellation, when it has one
};

// Routes an approval question to a person.
class Approver {
 public:
  virtual ~Approver() = default;
  virtual EscalationOutcome request(const ApprovalRequest& request) = 0;
};

struct EscalationRequest {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;  // the requested sandbox_permissions
  std::string justification;
  // The wire name of this call's standing mode. A string, so that a mode the tool layer could
  // not recognise is still judged (and never widened) rather than guessed.
  std::string effective_mode;
  std::optional<std::string> agent;  // nullopt or empty: the call has no agent
  std::string tool_name;
  std::string call_id;
  std::string subject = "command";  // "command" (bash) or "operation" (fs)
  std::optional<std::stop_token> signal;
};

// Why approve_escalation refused; callers branch on this, never on the text.
enum class EscalationRefusal {
  kNotStrictlyWider,  // no person was asked
  kNoApprover,
  kNoAgent,
  kRejected,
  kCancelled,
  kUnavailable,
};

// An escalation that was not granted. Neither invalid input nor sandbox unavailability: the
// standing policy holds and nothing ran.
class EscalationError : public std::runtime_error {
 public:
  EscalationError(EscalationRefusal refusal, const std::string& message)
      : std::runtime_error(message), refusal_(refusal) {}
  EscalationRefusal refusal() const noexcept { return refusal_; }

 private:
  EscalationRefusal refusal_;
};

// A narrow grant for one call, what a model asks for instead of a wider mode when the evidence
// names what the command needs: directories made writable (--allow-write), destinations added to
// the network allow-list (--network allow:), package caches made writable (--allow-cache).
struct NarrowGrant {
  std::vector<std::string> allow_write;
  std::vector<std::string> network_allow;
  std::vector<std::string> allow_cache;
  bool empty() const noexcept {
    return allow_write.empty() && network_allow.empty() && allow_cache.empty();
  }
};

// "--allow-write /data/out, --network allow:registry.npmjs.org, --allow-cache npm", each value
// made inert: what the person is asked to approve, in the flags' own words.
std::string describe_grant(const NarrowGrant& grant);

// The same fail-closed sequence for a narrow grant: `request.mode` is the mode the call runs
// under with it (the standing mode, or a strictly wider one, such as workspace-write from
// read-only for --allow-write), then an approver, an agent and one question whose reason is
// "grant <describe_grant> [under <mode>]: <justification>". Returns when it was allowed once;
// EscalationError otherwise, as approve_escalation.
void approve_grant(const NarrowGrant& grant, const EscalationRequest& request, Approver* approver);

// The fail-closed escalation sequence: strict widening (no prompt otherwise), an approver, an
// agent, then one question. Returns the granted mode for this one call, or throws
// EscalationError with the reference's exact text. An outcome outside EscalationOutcome throws
// std::logic_error("unreachable variant in EscalationOutcome").
SandboxMode approve_escalation(const EscalationRequest& request, Approver* approver);

}  // namespace dsh::sandbox
