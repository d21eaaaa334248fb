// SPDX-License-Identifier: Apache-2.0
// Seatbelt's home (macOS sandbox-exec): its SBPL profile, its failure rule and denial dialect.
// It has no status channel and no --chdir: it runs on the host, in the spawner's directory.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "profiles/fs_plan.h"

namespace dsh::sandbox::profiles {

// SBPL string literal: `"` + text with `\` and `"` escaped + `"`.
std::string sbpl_string(std::string_view text);
// `writable_roots` is seam::writable_roots(policy): canonical, deduplicated, workspace first.
// SBPL lets the last matching rule win, so the plan's rules come in this order after the base:
// the writable roots (those and plan.writable), then the denials that must override them: writes
// to each pinned git directory itself (no rename or removal) and to each read-only carve-out,
// then reads of each unreadable path. Every path is canonical, as Seatbelt matches resolved
// paths (/tmp is /private/tmp).
std::string seatbelt_profile(const SandboxPolicy& policy,
                             std::span<const std::string> writable_roots, const FsPlan& plan = {});

// In band: a "sandbox-exec: " line, any nonzero exit.
RunnerFailureRule seatbelt_failure_rule();
inline constexpr std::string_view kSeatbeltDenial = "operation not permitted";

}  // namespace dsh::sandbox::profiles
