// SPDX-License-Identifier: Apache-2.0
// What every surface says about a run's recorded refusals (docs/evidence-and-network.md): the
// markers and lines the agent render and `run` print, the narrowest policy change that would have
// allowed them (also `run --learn` and `run --escalate ask`), and the JSON fields. Pure: no I/O.
//
// A record's op, path and rule are text the confined command chose (a file name, a requested
// host): every text form here shows them through text::inert, so they can neither drive a
// terminal nor start a line of the sandbox's own. The JSON form keeps them exact.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "consumer/bash_executor.h"
#include "dsh/sandbox/escalation.h"
#include "nlohmann/json.hpp"

namespace dsh::sandbox::consumer {

// What was refused, from the record's rule: each kind has its own marker, its own JSON `kind`
// and its own advice (a network refusal is never lifted by a file mode, a kernel object by none).
enum class DenialKind { kFile, kMetadata, kNetwork, kKernelObject, kProcessBound };
DenialKind denial_kind(const Denial& denial);

// Text already made inert (text::inert, which writes a backslash as \\) with '[' and ']' escaped
// as \[ and \]: a field a confined command chose, inside a bracketed line of the agent render,
// can neither close that line nor open one that reads as the sandbox's.
std::string bracket_escaped(std::string_view inert);

// The host Unix socket a network record names when the launcher's supervisor refused a connect
// to it (rule network-denied, op connect, a path); nullopt for every other record.
std::optional<std::string> refused_unix_socket(const Denial& denial);
// "file", "metadata", "network", "kernel-object", "process-bound".
std::string_view wire_name(DenialKind kind);

// The markers of a run the sandbox denied: one per kind of refusal recorded, file first
// ("[sandbox: file access denied under MODE mode]", "[sandbox: network access denied by the
// network policy]", ...); the file marker alone when the denial has no records (a backend that
// gives no evidence). Empty when the run was not denied.
std::vector<std::string> denial_markers(const SandboxFacts& sandbox);

// Whether a wider sandbox mode could lift a refusal of this run: some record is not a network
// one (or there are no records to tell).
bool wider_mode_could_help(const SandboxFacts& sandbox);

// "[sandbox refused: OP PATH (RULE)]" per distinct record (at most a few, then how many more).
std::vector<std::string> denial_lines(const SandboxFacts& sandbox);

// The directories `--allow-write` would need for the file records, when those alone account
// for every refusal and each is a directory a policy may make writable; nullopt otherwise.
// Under read-only, paths beneath `workspace_root` need workspace-write instead and are left out;
// files beneath /dev, /proc and /sys, which no writable root admits, are left out as long as
// another record remains for the offer to lift.
std::optional<std::vector<std::string>> allow_write_fix(const SandboxFacts& sandbox,
                                                        const std::string& workspace_root);

// `host` (a name or an address, no port) canonical, when it names exactly one destination an
// allow-list entry may be proposed or granted for: one name (not localhost) or one address that
// opens nothing of the host (not loopback, link-local, unspecified, multicast, reserved);
// nullopt for a range, a wildcard, a special address or what is no destination.
std::optional<std::string> single_destination(std::string_view host);

// The allow-list entries `--network allow:` would need when every refusal is the proxy's and
// each names one destination (single_destination) not yet in the list; empty otherwise.
std::vector<std::string> allow_list_fix(const SandboxFacts& sandbox);

// The narrow grant that lifts every refusal of this run, when one does: the directories of
// allow_write_fix (file records alone), else the entries of allow_list_fix (the proxy's records
// alone); empty when none does (a wider mode, or nothing, is the answer).
NarrowGrant narrow_grant(const SandboxFacts& sandbox);

// "[sandbox: narrowest grant — retry this exact command once with allow_write ["/x"] +
// justification; ...]", the agent render's offer of `grant` (each value made inert).
std::string narrow_grant_marker(const NarrowGrant& grant);

// The smallest changes that would have allowed what was refused, one per line, narrowest first:
// the named directories (--allow-write DIR), then the named hosts (--network allow:NAME, only
// single names and addresses that open nothing of the host), then a wider mode or a sentence
// when no flag can (a kernel object). Empty: nothing was refused.
std::vector<std::string> narrowest_changes(const SandboxFacts& sandbox,
                                           const std::string& workspace_root);

// denialSource, denials [{op, kind, path, rule, pid, exe}], denialCount, merged into `object`.
void add_denial_json(nlohmann::json& object, const SandboxFacts& sandbox);

}  // namespace dsh::sandbox::consumer
