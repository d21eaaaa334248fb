// SPDX-License-Identifier: Apache-2.0
// dsh-netproxy's home: the network allow-list's runner. Outside, it heads the argv chain and
// serves the proxy; inside bwrap's network namespace (--unshare-net: only lo), its bridge role
// listens on 127.0.0.1:kNetProxyPort ahead of landlock-run. Its flags, the environment every
// common client reads its proxy from, its status channel, its failure rule and the parser of its
// reports. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "profiles/runner_report.h"

namespace dsh::sandbox::profiles {

// The loopback port inside the sandbox: the network namespace is the run's own, so no other
// program can hold it.
inline constexpr int kNetProxyPort = 3128;
// The proxy's status channel: above bwrap's seccomp descriptor (5) and the control socket (6).
inline constexpr int kNetProxyStatusFd = 7;

// `--allow E... --deny E... --resolve N=A...` from the policy's NetworkAllowList.
std::vector<std::string> netproxy_args(const SandboxPolicy& policy);
// `--status-fd 7` when status channels are wanted.
std::vector<std::string> netproxy_run_args(const RunNeeds& needs);
// The bridge stage inside bwrap: `--bridge 3128`.
std::vector<std::string> netproxy_bridge_args();
// bwrap `--setenv NAME VALUE` triples: HTTP(S)_PROXY, ALL_PROXY, NO_PROXY and their lower-case
// twins, npm, pip, git, cargo and Java settings (docs/evidence-and-network.md lists them).
std::vector<std::string> netproxy_env_args();
// The names and values themselves, for the docs and tests.
std::vector<std::pair<std::string, std::string>> netproxy_environment();

StatusChannel netproxy_status_channel();
// Exit 125 with a "dsh-netproxy: " line, as the launcher's.
RunnerFailureRule netproxy_failure_rule();
// Its own failure line on its status channel, or nothing (denial lines are evidence, not
// failures).
RunnerReport netproxy_status_report(std::string_view status);

// Why a selection cannot force the route, or nullopt: only bwrap's network namespace leaves the
// command no way out but the proxy; Landlock alone (no namespaces), Seatbelt and the Windows
// runner cannot, and an unfiltered network is never the fallback.
std::optional<std::string> netproxy_unsupported_reason(bool bwrap_backend);

}  // namespace dsh::sandbox::profiles
