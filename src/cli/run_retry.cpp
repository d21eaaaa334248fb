// SPDX-License-Identifier: Apache-2.0
#include "cli/run_retry.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "base/text.h"
#include "consumer/denials.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"
#include "policy/call_policy.h"

namespace dsh::sandbox::cli {

namespace {

using consumer::RunOutcome;
using consumer::RunSpec;

// Asks on the terminal; any answer but yes is a rejection. The request's reason comes first,
// made inert; the last line is the sandbox's own question, naming the retry and what it opens,
// so nothing a confined command chose (a file name in the lines above) can stand after it.
class TerminalApprover final : public Approver {
 public:
  explicit TerminalApprover(std::string question) : question_(std::move(question)) {}

  EscalationOutcome request(const ApprovalRequest& request) override {
    fmt::print(stderr, "dsh-sandbox: {}\n{} [y/N] ", text::inert(request.reason), question_);
    (void)std::fflush(stderr);
    std::string answer;
    if (!std::getline(std::cin, answer)) return EscalationOutcome::kCancelled;
    return answer == "y" || answer == "yes" ? EscalationOutcome::kAllowedOnce
                                            : EscalationOutcome::kRejected;
  }

 private:
  std::string question_;
};

// The narrowest change the evidence supports: the refused directories (--allow-write, which
// takes effect under workspace-write), the refused hosts (allow-list entries, in the same mode),
// else the next wider mode; danger-full-access only when nothing narrower could help. Nothing
// for refusals nothing names (a socket refused before any name was known, a bound).
std::optional<RetryOffer> retry_offer(const consumer::SandboxFacts& sandbox) {
  if (std::vector<std::string> hosts = consumer::allow_list_fix(sandbox); !hosts.empty()) {
    return RetryOffer{sandbox.mode, {}, std::move(hosts)};
  }
  if (!consumer::wider_mode_could_help(sandbox)) return std::nullopt;
  if (sandbox.mode != SandboxMode::kDangerFullAccess) {
    if (auto dirs = consumer::allow_write_fix(sandbox, sandbox.workspace_root)) {
      return RetryOffer{SandboxMode::kWorkspaceWrite, std::move(*dirs)};
    }
  }
  const auto wider = wider_modes(sandbox.mode);
  if (wider.empty()) return std::nullopt;
  return RetryOffer{wider.front(), {}};
}

// The question's last line: the retry, and what it opens in plain words.
std::string retry_question(const RetryOffer& offer, SandboxMode current) {
  if (!offer.network_allow.empty()) {
    const bool one = offer.network_allow.size() == 1;
    return fmt::format(
        "Retry this command once with --network allow: for the {} listed above ({} through the "
        "sandbox's proxy, nothing else)?",
        one ? "host" : "hosts", one ? "that destination" : "those destinations");
  }
  if (offer.mode == SandboxMode::kDangerFullAccess) {
    return "Retry this command once under danger-full-access (no sandbox: every file and the "
           "network)?";
  }
  const bool one = offer.allow_write.size() == 1;
  const std::string dirs = offer.allow_write.empty()
                               ? ""
                               : fmt::format(" with --allow-write for the {} listed above",
                                             one ? "directory" : "directories");
  const std::string named = one ? "that directory" : "those directories";
  const std::string opens = current == offer.mode ? named + " writable, nothing else"
                            : dirs.empty()        ? "the workspace writable"
                                                  : "the workspace and " + named + " writable";
  return fmt::format("Retry this command once under {}{} ({})?", wire_name(offer.mode), dirs,
                     opens);
}

// What was refused and the directories the retry would add, each on its own line, inert.
void print_evidence(const RunOutcome& outcome, const RetryOffer& offer) {
  for (const std::string& line : consumer::denial_lines(outcome.sandbox)) {
    fmt::print(stderr, "{}\n", line);
  }
  for (const std::string& dir : offer.allow_write) {
    fmt::print(stderr, "dsh-sandbox: --allow-write {}\n", text::inert(dir));
  }
  for (const std::string& host : offer.network_allow) {
    fmt::print(stderr, "dsh-sandbox: --network allow:{}\n", text::inert(host));
  }
}

// Why nothing is offered: for a network refusal, what would lift it, which no retry can name.
std::string no_retry_reason(const consumer::SandboxFacts& sandbox) {
  const auto& records = sandbox.denials.records;
  const bool socket = std::any_of(records.begin(), records.end(), [](const Denial& denial) {
    return denial.rule == "network-denied";
  });
  if (socket) {
    return "the network is off and the socket was refused before any name was known; run again "
           "with --network allow:NAME naming what the command needs (--learn names it when the "
           "command asks through an allow-list's proxy)";
  }
  return "no wider sandbox mode and no allow-list entry lifts this refusal";
}

}  // namespace

// The retry a person at this terminal approves, narrowest first; nullopt otherwise.
std::optional<RetryOffer> approved_retry(const RunInvocation& run, const RunSpec& spec,
                                         const RunOutcome& outcome) {
  // Only on evidence: printed text ("permission denied") never makes the sandbox ask. A name the
  // proxy refused is no file denial (no mode lifts it), but an entry does, once the command
  // failed for it.
  const bool refused_name = consumer::exit_status(outcome.status) != 0 &&
                            !consumer::allow_list_fix(outcome.sandbox).empty();
  if (run.escalate != Escalation::kAsk || !(outcome.sandbox.denied || refused_name) ||
      outcome.sandbox.denial_source != DenialSource::kKernel ||
      outcome.sandbox.denials.records.empty() || ::isatty(STDIN_FILENO) == 0 ||
      ::isatty(STDERR_FILENO) == 0) {
    return std::nullopt;
  }
  std::optional<RetryOffer> offer = retry_offer(outcome.sandbox);
  if (!offer) {
    fmt::print(stderr, "dsh-sandbox: no retry: {}\n", no_retry_reason(outcome.sandbox));
    return std::nullopt;
  }
  // The retry is held to a first run's network check, before anyone is asked: a wider mode
  // that could not enforce this call's --network is never offered.
  if (auto refused = policy::unenforceable_network(offer->mode, spec.policy.network,
                                                   run.policy.network_given)) {
    fmt::print(stderr, "dsh-sandbox: no retry under {}: {}\n", wire_name(offer->mode), *refused);
    return std::nullopt;
  }
  print_evidence(outcome, *offer);
  TerminalApprover approver(retry_question(*offer, outcome.sandbox.mode));
  const std::string reason =
      fmt::format("the sandbox refused what the command did under {} (the lines above)",
                  wire_name(outcome.sandbox.mode));
  if (offer->mode == outcome.sandbox.mode) {
    // The same mode with more writable directories: not an escalation of the mode, asked alike.
    const EscalationOutcome answer = approver.request({"dsh-sandbox", "run", "", reason, {}});
    if (answer == EscalationOutcome::kAllowedOnce) return offer;
    return std::nullopt;
  }
  EscalationRequest request{offer->mode, reason, std::string(wire_name(outcome.sandbox.mode)),
                            "dsh-sandbox"};
  request.tool_name = "run";
  try {
    approve_escalation(request, &approver);
    return offer;
  } catch (const EscalationError& refusal) {
    fmt::print(stderr, "dsh-sandbox: {}\n", refusal.what());
    return std::nullopt;
  }
}

void apply_retry(RunSpec& spec, const RetryOffer& retry) {
  spec.policy.mode = retry.mode;
  if (retry.mode == SandboxMode::kDangerFullAccess) spec.policy.network = NetworkPolicy::kInherit;
  for (const std::string& dir : retry.allow_write) spec.policy.allow_write.push_back(dir);
  for (const std::string& host : retry.network_allow) {
    spec.policy.network_allow.allow.push_back(host);
  }
}

}  // namespace dsh::sandbox::cli
