// SPDX-License-Identifier: Apache-2.0
#include "consumer/render.h"

#include "consumer/denials.h"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>  // sigabbrev_np (glibc 2.32, a GNU extension of string.h)
#include <optional>
#include <system_error>
#include <variant>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/escalation.h"

namespace dsh::sandbox::consumer {

namespace {

std::string truncation_suffix(const RunOutcome& outcome) {
  if (!outcome.out.truncated && !outcome.err.truncated) return {};
  std::string spills;
  for (const exec::StreamOutput* stream : {&outcome.out, &outcome.err}) {
    if (!stream->truncated) continue;
    if (!spills.empty()) spills += ", ";
    spills += stream->spill_path ? text::inert(*stream->spill_path) : "(unavailable)";
  }
  return fmt::format("[output truncated; full output: {}]\n", spills);
}

std::string ended_by(std::optional<int> exit_code, std::optional<int> signal) {
  if (signal) return fmt::format("[killed by signal: {}]\n", signal_name(*signal));
  if (exit_code) return fmt::format("[exit code: {}]\n", *exit_code);
  return {};
}

// The markers after the denial ones: how the run ended, the exit marker last.
std::string ending_markers(const RunStatus& status, long long timeout_ms) {
  return std::visit(
      Overloaded{
          [](const status::Exited& exited) { return ended_by(exited.code, std::nullopt); },
          [](const status::Signalled& signalled) {
            return ended_by(std::nullopt, signalled.signal);
          },
          [timeout_ms](const status::TimedOut& timed_out) {
            return fmt::format("[timed out after {}ms]\n", timeout_ms) +
                   ended_by(timed_out.exit_code, timed_out.signal);
          },
          [](const status::Aborted& aborted) {
            return ended_by(aborted.exit_code, aborted.signal);
          },
          // The CLI renders these as errors (render_error_for_agent); nothing ran to mark.
          [](const status::NotStarted&) { return std::string(); },
          [](const status::RunnerFailed&) { return std::string(); },
      },
      status);
}

}  // namespace

std::string memory_exceeded_marker(const exec::BoundFact& memory) {
  return fmt::format("[memory bound exceeded: the tree used more than {} bytes and was ended]",
                     memory.limit.value_or(0));
}

namespace {

nlohmann::json bound_json(const exec::BoundFact& bound) {
  return {{"max", bound.limit ? nlohmann::json(*bound.limit) : nlohmann::json(nullptr)},
          {"enforcedBy",
           bound.enforced_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(bound.enforced_by)},
          {"exceeded", bound.exceeded}};
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

std::string output_nonce() {
  std::array<unsigned char, 8> random{};
  std::size_t filled = 0;
  while (filled < random.size()) {
    const ssize_t n = ::getrandom(random.data() + filled, random.size() - filled, 0);
    if (n > 0) {
      filled += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      // No kernel randomness: a nonce the command could predict would let it close the fence.
      throw std::system_error(errno, std::generic_category(), "getrandom for the output fence");
    }
  }
  std::string nonce;
  for (const unsigned char byte : random) nonce += fmt::format("{:02x}", byte);
  return nonce;
}

std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms) {
  return render_for_agent(outcome, escalation_advertised, timeout_ms, output_nonce());
}

void append_fenced(std::string& text, std::string_view stream, const std::string& bytes,
                   std::string_view nonce) {
  if (bytes.empty()) return;
  text += fmt::format("<{} {}>\n", stream, nonce);
  // The render is the sandbox's text: the command's lines stay lines, but no byte of them may
  // drive the reader's terminal (ESC, CR, the C1 controls) or hide what follows.
  const std::string shown = text::inert_lines(bytes);
  text += shown;
  if (!shown.ends_with('\n')) text += '\n';
  text += fmt::format("</{} {}>\n", stream, nonce);
}

std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms, std::string_view nonce) {
  std::string text;
  // The command's bytes, fenced: everything between the opening and the closing line is the
  // command's, and only lines after the last closing fence are the sandbox's. The nonce is drawn
  // after the command ended, so the command cannot print a closing line that matches.
  append_fenced(text, "stdout", outcome.out.tail, nonce);
  append_fenced(text, "stderr", outcome.err.tail, nonce);
  if (text.empty()) text = "(no output)\n";
  text += truncation_suffix(outcome);
  for (const std::string& marker : denial_markers(outcome.sandbox)) text += marker + "\n";
  // The narrowest change first: a grant of the refused directories or hosts, when one lifts
  // every refusal, is offered instead of a wider mode (which would open more than the evidence
  // needs). A network refusal is lifted by --network, never by a wider file mode: no mode hint
  // for it alone.
  const NarrowGrant grant = escalation_advertised && !outcome.sandbox.denials.records.empty()
                                ? narrow_grant(outcome.sandbox)
                                : NarrowGrant{};
  if (!grant.empty()) {
    text += narrow_grant_marker(grant) + "\n";
  } else if (outcome.sandbox.denied && escalation_advertised &&
             wider_mode_could_help(outcome.sandbox)) {
    text += escalation_hint_marker("command") + "\n";
  }
  // Evidence: what was refused and what would have allowed it, whether or not it failed the run.
  for (const std::string& line : denial_lines(outcome.sandbox)) text += line + "\n";
  if (!outcome.sandbox.denials.records.empty()) {
    const std::vector<std::string> changes =
        narrowest_changes(outcome.sandbox, outcome.sandbox.workspace_root);
    for (const std::string& change : changes) {
      text += "[narrowest change: " + bracket_escaped(change) + "]\n";
    }
  }
  if (outcome.bounds.memory.exceeded) text += memory_exceeded_marker(outcome.bounds.memory) + "\n";
  text += ending_markers(outcome.status, timeout_ms);
  text.pop_back();  // no trailing newline after the last line
  return text;
}

std::string render_error_for_agent(const std::string& message) { return "Error: " + message; }

int exit_status(const RunStatus& status) {
  return std::visit(Overloaded{
                        [](const status::Exited& exited) { return exited.code; },
                        [](const status::Signalled& signalled) { return 128 + signalled.signal; },
                        [](const status::TimedOut&) { return kTimeoutExit; },
                        [](const status::Aborted& aborted) {
                          return aborted.signal ? 128 + *aborted.signal
                                                : aborted.exit_code.value_or(kNotRunExit);
                        },
                        [](const status::NotStarted& not_started) {
                          return not_started.error == ENOENT ? 127 : 126;
                        },
                        [](const status::RunnerFailed&) { return kNotRunExit; },
                    },
                    status);
}

nlohmann::json result_json(const RunOutcome& given, int interrupted) {
  // A runner failure reports the command as not run: no backend, no output, no bounds held it.
  const bool runner_failed = std::holds_alternative<status::RunnerFailed>(given.status);
  RunOutcome not_run;
  not_run.status = given.status;
  not_run.sandbox.mode = given.sandbox.mode;
  const RunOutcome& outcome = runner_failed ? not_run : given;
  const auto optional_int = [](std::optional<int> value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  const std::optional<int> signal = signal_of(outcome.status);
  const exec::BoundsFacts& bounds = outcome.bounds;
  nlohmann::json object = {
      {"mode", wire_name(outcome.sandbox.mode)},
      {"backend", outcome.sandbox.backend.empty() ? nlohmann::json(nullptr)
                                                  : nlohmann::json(outcome.sandbox.backend)},
      {"enforcement", outcome.sandbox.enforcement
                          ? nlohmann::json(wire_name(*outcome.sandbox.enforcement))
                          : nlohmann::json(nullptr)},
      {"strictEnforcement", outcome.sandbox.strict_enforcement
                                ? nlohmann::json(wire_name(*outcome.sandbox.strict_enforcement))
                                : nlohmann::json(nullptr)},
      {"ungoverned", outcome.sandbox.ungoverned},
      {"exitCode", optional_int(exit_code_of(outcome.status))},
      {"signal", signal ? nlohmann::json(signal_name(*signal)) : nlohmann::json(nullptr)},
      {"timedOut", std::holds_alternative<status::TimedOut>(outcome.status)},
      {"denied", outcome.sandbox.denied},
      {"runnerFailed", runner_failed},
      {"stdout", outcome.out.tail},
      {"stderr", outcome.err.tail},
      {"durationMs", outcome.duration.count()},
      {"interrupted",
       interrupted != 0 ? nlohmann::json(signal_name(interrupted)) : nlohmann::json(nullptr)},
      {"bounds",
       {{"processes", bound_json(bounds.processes)},
        {"memory", bound_json(bounds.memory)},
        {"treeKill", bounds.tree_kill}}}};
  add_denial_json(object, outcome.sandbox);
  return object;
}

std::optional<std::string> start_failure(const RunOutcome& outcome) {
  const auto* not_started = std::get_if<status::NotStarted>(&outcome.status);
  if (not_started == nullptr) return std::nullopt;
  // A workdir the caller could enter that bwrap cannot: only its own view hides it.
  const std::vector<RunnerLayer>& layers = outcome.sandbox.layers;
  const bool hidden = not_started->stage == exec::SpawnStage::kWorkdir &&
                      std::find(layers.begin(), layers.end(), RunnerLayer::kBwrap) != layers.end();
  return fmt::format("cannot start the command: {}{}", not_started->message(),
                     hidden ? "; bwrap's view of the filesystem hides that directory (its own "
                              "/dev and /proc, and a private /tmp under workspace-write): run "
                              "from a directory the sandbox shows, such as the workspace"
                            : "");
}

}  // namespace dsh::sandbox::consumer
