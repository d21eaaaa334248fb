// SPDX-License-Identifier: Apache-2.0
// dsh-netproxy's two roles. Outside the sandbox, the proxy: it starts the rest of its argv (bwrap
// and what bwrap runs) with one end of a control socket, serves every stream the bridge hands
// over (HTTP CONNECT, plain HTTP forwarding, SOCKS5) under the allow-list, and exits with the
// child's status once it ended. Inside bwrap's network namespace, the bridge: a listener on
// 127.0.0.1:PORT whose every accepted connection travels whole to the proxy over the control
// socket (SCM_RIGHTS): the proxy relays between the command's own socket and the destination,
// and no socket file exists anywhere.
#pragma once

#include <string>
#include <vector>

#include "dsh/sandbox/modes.h"

namespace dsh::sandbox::netproxy {

// The control socket's number in the proxy's child and in the bridge.
inline constexpr int kControlFd = 6;
// The runner's own failures: one "dsh-netproxy: ..." line, exit 125 (as landlock-run's).
inline constexpr int kProxyFailure = 125;

struct ProxyOptions {
  NetworkAllowList list;
  int status_fd = -1;             // denial lines and the failure line; -1: none
  std::vector<std::string> argv;  // the child: bwrap ...
};

struct BridgeOptions {
  int port = 0;
  int control_fd = kControlFd;
  std::vector<std::string> argv;  // what the bridge execs: landlock-run ... or the command
};

// Both return only on failure before the child started (the message), or never.
[[noreturn]] void run_proxy(const ProxyOptions& options);
[[noreturn]] void run_bridge(const BridgeOptions& options);

// "dsh-netproxy: " + message on stderr and the status fd, exit 125.
[[noreturn]] void fail(int status_fd, const std::string& message);

}  // namespace dsh::sandbox::netproxy
