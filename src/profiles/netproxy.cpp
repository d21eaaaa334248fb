// SPDX-License-Identifier: Apache-2.0
#include "profiles/netproxy.h"

#include <fmt/format.h>

#include "profiles/runner_spec.h"

namespace dsh::sandbox::profiles {

std::vector<std::string> netproxy_args(const SandboxPolicy& policy) {
  std::vector<std::string> args;
  const NetworkAllowList& list = policy.network_allow;
  args.reserve(2 * (list.allow.size() + list.deny.size() + list.resolve.size()));
  for (const std::string& entry : list.allow) args.insert(args.end(), {"--allow", entry});
  for (const std::string& entry : list.deny) args.insert(args.end(), {"--deny", entry});
  for (const std::string& entry : list.resolve) args.insert(args.end(), {"--resolve", entry});
  return args;
}

std::vector<std::string> netproxy_run_args(const RunNeeds& needs) {
  if (!needs.status_channels) return {};
  return {"--status-fd", std::to_string(kNetProxyStatusFd)};
}

std::vector<std::string> netproxy_bridge_args() {
  return {"--bridge", std::to_string(kNetProxyPort)};
}

std::vector<std::pair<std::string, std::string>> netproxy_environment() {
  const std::string http = fmt::format("http://127.0.0.1:{}", kNetProxyPort);
  // socks5h: the client hands the name to the proxy, which resolves it (DNS is the proxy's).
  const std::string socks = fmt::format("socks5h://127.0.0.1:{}", kNetProxyPort);
  // Empty, replacing the caller's: every destination goes through the proxy, loopback too. The
  // command's own loopback is the namespace's, where nothing but the bridge listens (and
  // Landlock lets it connect to the bridge's port only), so an allowed service on the host's
  // loopback is reached only through the proxy; a name the caller exempted would otherwise go
  // around the allow-list straight into a wall.
  const std::string no_proxy;
  const std::string port = std::to_string(kNetProxyPort);
  return {
      {"HTTP_PROXY", http},
      {"http_proxy", http},
      {"HTTPS_PROXY", http},
      {"https_proxy", http},
      {"ALL_PROXY", socks},
      {"all_proxy", socks},
      {"NO_PROXY", no_proxy},
      {"no_proxy", no_proxy},
      {"npm_config_proxy", http},
      {"npm_config_https_proxy", http},
      {"PIP_PROXY", http},
      {"CARGO_HTTP_PROXY", http},
      // git: http.proxy through the environment form of `git -c` (git 2.31).
      {"GIT_CONFIG_COUNT", "1"},
      {"GIT_CONFIG_KEY_0", "http.proxy"},
      {"GIT_CONFIG_VALUE_0", http},
      // Java ignores the *_PROXY variables; the JVM reads this one at start-up.
      {"JAVA_TOOL_OPTIONS",
       fmt::format("-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={0} -Dhttps.proxyHost=127.0.0.1 "
                   "-Dhttps.proxyPort={0} -Dhttp.nonProxyHosts=",
                   port)},
  };
}

std::vector<std::string> netproxy_env_args() {
  std::vector<std::string> args;
  for (auto& [name, value] : netproxy_environment()) {
    args.insert(args.end(), {"--setenv", name, value});
  }
  return args;
}

StatusChannel netproxy_status_channel() {
  return {kNetProxyStatusFd, RunnerLayer::kNetProxy, StatusFormat::kProxyLines};
}

RunnerFailureRule netproxy_failure_rule() {
  return {std::vector<int>{125}, {"dsh-netproxy: "}, std::nullopt};
}

RunnerReport netproxy_status_report(std::string_view status) {
  std::size_t start = 0;
  while (start < status.size()) {
    const std::size_t end = std::min(status.find('\n', start), status.size());
    const std::string_view line = status.substr(start, end - start);
    if (line.starts_with("dsh-netproxy: ")) return {std::string(line), {}, {}};
    start = end + 1;
  }
  return {};
}

std::optional<std::string> netproxy_unsupported_reason(bool bwrap_backend) {
  if (bwrap_backend) return std::nullopt;
  return "a network allow-list needs bwrap's network namespace to force every connection "
         "through the proxy; this backend cannot, and an unfiltered network is never the "
         "fallback";
}

namespace {

using Argv = std::vector<std::string>;

// Outside, the proxy with the policy's lists; inside bwrap's network namespace, the bridge.
Argv netproxy_layer_args(const LayerContext& context, RunnerPlace place) {
  if (place == RunnerPlace::kInsideBwrap) return netproxy_bridge_args();
  Argv args = netproxy_run_args(context.needs);
  const Argv lists = netproxy_args(context.policy);
  args.insert(args.end(), lists.begin(), lists.end());
  return args;
}

}  // namespace

const RunnerSpec& netproxy_spec() {
  static const RunnerSpec spec{
      .layer = RunnerLayer::kNetProxy,
      .role = "network allow-list's proxy",
      .backend = std::nullopt,
      .confines = false,
      .source = RunnerSource::kShipped,
      .installed_name = "dsh-netproxy",
      .located_by = "beside the launcher",
      .probe = RunnerProbe::kComponent,
      .program = [](const Runners& runners) { return Argv{runners.netproxy}; },
      .args = netproxy_layer_args,
      // The bridge reports nothing of its own: the proxy outside holds the channel.
      .status_channel = [](RunnerPlace place) -> std::optional<StatusChannel> {
        if (place != RunnerPlace::kHost) return std::nullopt;
        return netproxy_status_channel();
      },
      .failure_rule = [](const Runners&) { return netproxy_failure_rule(); },
      .limits = no_limits,
      .refusal = no_refusal,
  };
  return spec;
}

}  // namespace dsh::sandbox::profiles
