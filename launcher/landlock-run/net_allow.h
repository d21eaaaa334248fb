// SPDX-License-Identifier: Apache-2.0
// --allow-connect-port N: the network allow-list's inside wall. The command's network namespace
// (bwrap --unshare-net) holds only lo, where dsh-netproxy's bridge listens on port N; this option
// lets the command reach exactly that: Landlock (ABI 4, Linux 6.7) handles TCP bind and connect
// with one rule, connect to port N, and the seccomp table below refuses every socket but a
// stream one of AF_UNIX, AF_INET or AF_INET6 (no UDP, no raw or packet socket, no netlink),
// socketpair beyond AF_UNIX (io_uring, whose socket and connect operations bypass socket(), is
// refused in every run: seccomp_rules.h kIoUringRules).
#pragma once

#include <stdint.h>

#include "seccomp_rules.h"

namespace landlock_run {

inline constexpr uint32_t kAllowedFamilies[] = {1 /* AF_UNIX */, 2 /* AF_INET */,
                                                10 /* AF_INET6 */};
// SOCK_STREAM with any of SOCK_NONBLOCK (0x800) and SOCK_CLOEXEC (0x80000).
inline constexpr uint32_t kAllowedTypes[] = {1, 1 | 0x800, 1 | 0x80000, 1 | 0x800 | 0x80000};

inline constexpr SyscallRule kStreamNetworkRules[] = {
    {__NR_socket, "socket(family not unix/inet/inet6)", EAFNOSUPPORT, ArgMatch::kLow32NotIn, 0, 0,
     kAllowedFamilies, 3},
    {__NR_socket, "socket(type not stream)", EAFNOSUPPORT, ArgMatch::kLow32NotIn, 1, 0,
     kAllowedTypes, 4},
    {__NR_socketpair, "socketpair(!AF_UNIX)", EAFNOSUPPORT, ArgMatch::kNotEqual, 0, kAfUnix},
};

// landlock_add_rule(LANDLOCK_RULE_NET_PORT) granting CONNECT_TCP to `port`. Returns 0 or a
// negative errno.
int add_connect_port_rule(int ruleset_fd, uint16_t port);

}  // namespace landlock_run
