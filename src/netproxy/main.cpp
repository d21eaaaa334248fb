// SPDX-License-Identifier: Apache-2.0
// dsh-netproxy: the network allow-list's runner (proxy.h says what each role does).
//
//   dsh-netproxy [--allow ENTRY]... [--deny ENTRY]... [--resolve NAME=ADDRESS]...
//                [--status-fd N] -- ARGV...            (outside: the proxy; ARGV starts bwrap)
//   dsh-netproxy --bridge PORT -- ARGV...             (inside bwrap: the loopback listener)
//
// Every failure before ARGV runs is one "dsh-netproxy: ..." line on stderr (and the status fd),
// exit 125. The proxy exits with ARGV's status, or dies by its signal.
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "dsh/sandbox/modes.h"
#include "netproxy/proxy.h"
#include "seam/network_entry.h"

namespace {

using dsh::sandbox::netproxy::fail;

int parse_fd(std::string_view text, std::string_view flag) {
  const auto port = dsh::sandbox::parse_port(text);
  if (!port || *port < 3) fail(-1, fmt::format("usage error: {} requires a number from 3", flag));
  return *port;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dsh::sandbox;
  netproxy::ProxyOptions proxy;
  netproxy::BridgeOptions bridge;
  bool bridge_role = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (i + 1 >= argc) fail(-1, fmt::format("usage error: {} requires a value", arg));
    const std::string_view value = argv[++i];
    if (arg == "--allow" || arg == "--deny") {
      auto canonical = canonical_network_entry(value);
      if (!canonical) fail(proxy.status_fd, "usage error: " + canonical.error().message);
      (arg == "--allow" ? proxy.list.allow : proxy.list.deny).push_back(canonical.value());
    } else if (arg == "--resolve") {
      auto canonical = canonical_network_resolve(value);
      if (!canonical) fail(proxy.status_fd, "usage error: " + canonical.error().message);
      proxy.list.resolve.push_back(canonical.value());
    } else if (arg == "--status-fd") {
      proxy.status_fd = parse_fd(value, arg);
    } else if (arg == "--bridge") {
      bridge_role = true;
      const auto port = parse_port(value);
      if (!port) fail(-1, "usage error: --bridge requires a port");
      bridge.port = *port;
    } else {
      fail(proxy.status_fd, fmt::format("usage error: unknown argument: {}", arg));
    }
  }
  if (i + 1 >= argc) fail(proxy.status_fd, "usage error: missing `-- <argv>...` command");
  std::vector<std::string> rest(argv + i + 1, argv + argc);
  if (bridge_role) {
    bridge.argv = std::move(rest);
    netproxy::run_bridge(bridge);
  }
  proxy.argv = std::move(rest);
  netproxy::run_proxy(proxy);
}
