// SPDX-License-Identifier: Apache-2.0
// Escalation: the ladder, the pairing rules, the markers and the approval sequence.
#include "dsh/sandbox/escalation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

#include "base/text.h"

namespace dsh::sandbox {

namespace {

constexpr std::array<SandboxMode, 2> kWiderThanReadOnly = {SandboxMode::kWorkspaceWrite,
                                                           SandboxMode::kDangerFullAccess};
constexpr std::array<SandboxMode, 1> kWiderThanWorkspaceWrite = {SandboxMode::kDangerFullAccess};

// JavaScript's String.prototype.trim whitespace (the reference's test for a blank
// justification): ASCII \t \n \v \f \r and space, plus the Unicode space separators, line and
// paragraph separators, and the BOM.
constexpr std::array<char32_t, 14> kJsSpaces = {
    U'\t',     U'\n',     U'\v',     U'\f',     U'\r',     U' ',      U'\u00a0',
    U'\u1680', U'\u2028', U'\u2029', U'\u202f', U'\u205f', U'\u3000', U'\ufeff'};

bool is_js_whitespace(char32_t c) {
  if (c >= U'\u2000' && c <= U'\u200a') return true;  // the typographic spaces
  return std::find(kJsSpaces.begin(), kJsSpaces.end(), c) != kJsSpaces.end();
}

// Decodes one UTF-8 code point at `text[i]`, advancing `i`; a malformed sequence yields
// U+FFFD (not whitespace), so bytes that are not text never count as blank.
char32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto lead = static_cast<unsigned char>(text[i++]);
  if (lead < 0x80) return lead;
  const std::size_t extra = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  if (extra == 0 || i + extra > text.size()) return U'\ufffd';
  auto c = static_cast<char32_t>(lead & (0x3f >> extra));
  for (std::size_t k = 0; k < extra; ++k) {
    const auto byte = static_cast<unsigned char>(text[i++]);
    if ((byte & 0xc0) != 0x80) return U'\ufffd';
    c = (c << 6) | (byte & 0x3fU);
  }
  // An overlong form (C0 A0 for a space) is not the character it spells.
  constexpr std::array<char32_t, 4> kSmallest = {0, 0x80, 0x800, 0x10000};
  return c < kSmallest.at(extra) ? U'\ufffd' : c;
}

bool is_blank(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (!is_js_whitespace(next_code_point(text, i))) return false;
  }
  return true;
}

[[noreturn]] void refuse(EscalationRefusal refusal, const std::string& message) {
  throw EscalationError(refusal, message);
}

}  // namespace

std::span<const SandboxMode> wider_modes(SandboxMode mode) noexcept {
  switch (mode) {
    case SandboxMode::kReadOnly:
      return kWiderThanReadOnly;
    case SandboxMode::kWorkspaceWrite:
      return kWiderThanWorkspaceWrite;
    case SandboxMode::kDangerFullAccess:
      return {};
  }
  return {};
}

std::span<const SandboxMode> wider_modes(std::string_view mode) noexcept {
  for (const SandboxMode known : kSandboxModes) {
    if (wire_name(known) == mode) return wider_modes(known);
  }
  return {};
}

Result<void> validate_escalation_args(std::optional<SandboxMode> permissions,
                                      std::optional<std::string_view> justification) {
  if (permissions && !justification) {
    return InvalidInput{"invalid escalation: sandbox_permissions requires a justification"};
  }
  if (!permissions && justification) {
    return InvalidInput{
        "invalid escalation: justification is only valid together with sandbox_permissions"};
  }
  if (justification && is_blank(*justification)) {
    return InvalidInput{"invalid justification: expected a non-empty sentence"};
  }
  return {};
}

std::string sandbox_denial_marker(SandboxMode mode) {
  return fmt::format("[sandbox: file access denied under {} mode]", wire_name(mode));
}

std::string escalation_hint_marker(std::string_view subject) {
  return fmt::format(
      "[sandbox: escalation available \u2014 retry this exact {} once with sandbox_permissions "
      "(the narrowest wider mode that suffices) + justification; the approval prompt asks the "
      "user]",
      subject);
}

std::string_view wire_name(EscalationOutcome outcome) {
  switch (outcome) {
    case EscalationOutcome::kAllowedOnce:
      return "allowed-once";
    case EscalationOutcome::kRejected:
      return "rejected";
    case EscalationOutcome::kCancelled:
      return "cancelled";
    case EscalationOutcome::kUnavailable:
      return "unavailable";
  }
  throw std::logic_error("unreachable variant in EscalationOutcome");
}

namespace {

// An approver, an agent, then the one question; returns when it was allowed once. `what` names
// the request in the refusals' texts ("\"workspace-write\"", the reference's).
void ask(const EscalationRequest& request, Approver* approver, const std::string& what,
         const std::string& reason) {
  if (approver == nullptr) {
    refuse(EscalationRefusal::kNoApprover,
           fmt::format("sandbox escalation to {} requires approval, but no approval service "
                       "is composed",
                       what));
  }
  if (!request.agent || request.agent->empty()) {
    refuse(EscalationRefusal::kNoAgent,
           fmt::format("sandbox escalation to {} requires approval, but the call has no agent "
                       "to route it through",
                       what));
  }
  const EscalationOutcome outcome = approver->request(
      ApprovalRequest{*request.agent, request.tool_name, request.call_id, reason, request.signal});
  switch (outcome) {
    case EscalationOutcome::kAllowedOnce:
      return;
    case EscalationOutcome::kRejected:
      refuse(EscalationRefusal::kRejected,
             fmt::format("the user rejected escalating this {} to {}", request.subject, what));
    case EscalationOutcome::kCancelled:
      refuse(EscalationRefusal::kCancelled,
             fmt::format("approval for escalating to {} was cancelled", what));
    case EscalationOutcome::kUnavailable:
      refuse(EscalationRefusal::kUnavailable,
             fmt::format("sandbox escalation to {} requires approval, but no approval channel "
                         "is available",
                         what));
  }
  throw std::logic_error("unreachable variant in EscalationOutcome");
}

}  // namespace

SandboxMode approve_escalation(const EscalationRequest& request, Approver* approver) {
  const std::string_view mode = wire_name(request.mode);
  const std::span<const SandboxMode> wider = wider_modes(request.effective_mode);
  // Judged before anyone is asked: a person must never be prompted for a non-widening request.
  if (std::find(wider.begin(), wider.end(), request.mode) == wider.end()) {
    refuse(EscalationRefusal::kNotStrictlyWider,
           fmt::format("sandbox escalation to \"{}\" is not strictly wider than this call's "
                       "current \"{}\" mode",
                       mode, request.effective_mode));
  }
  ask(request, approver, fmt::format("\"{}\"", mode),
      fmt::format("escalate sandbox to {}: {}", mode, request.justification));
  return request.mode;
}

std::string describe_grant(const NarrowGrant& grant) {
  std::vector<std::string> parts;
  for (const std::string& dir : grant.allow_write) {
    parts.push_back("--allow-write " + text::inert(dir));
  }
  if (!grant.network_allow.empty()) {
    std::vector<std::string> hosts;
    for (const std::string& host : grant.network_allow) hosts.push_back(text::inert(host));
    parts.push_back(fmt::format("--network allow:{}", fmt::join(hosts, ",")));
  }
  if (!grant.allow_cache.empty()) {
    std::vector<std::string> names;
    for (const std::string& name : grant.allow_cache) names.push_back(text::inert(name));
    parts.push_back(fmt::format("--allow-cache {}", fmt::join(names, ",")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

void approve_grant(const NarrowGrant& grant, const EscalationRequest& request, Approver* approver) {
  const std::string_view mode = wire_name(request.mode);
  const std::span<const SandboxMode> wider = wider_modes(request.effective_mode);
  const bool same = mode == request.effective_mode;
  // Judged before anyone is asked: the grant's mode is the standing one or strictly wider.
  if (grant.empty() ||
      (!same && std::find(wider.begin(), wider.end(), request.mode) == wider.end())) {
    refuse(EscalationRefusal::kNotStrictlyWider,
           fmt::format("a grant of {} under \"{}\" is no narrow widening of this call's current "
                       "\"{}\" mode",
                       grant.empty() ? std::string("nothing") : describe_grant(grant), mode,
                       request.effective_mode));
  }
  const std::string described = describe_grant(grant);
  ask(request, approver, described,
      fmt::format("grant {}{}: {}", described, same ? "" : fmt::format(" under {}", mode),
                  request.justification));
}

}  // namespace dsh::sandbox
