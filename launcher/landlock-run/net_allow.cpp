// SPDX-License-Identifier: Apache-2.0
#include "net_allow.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi.h"

namespace landlock_run {

namespace {

constexpr int kRuleNetPort = 2;  // LANDLOCK_RULE_NET_PORT, ABI 4

// struct landlock_net_port_attr (uapi/linux/landlock.h), which the kernel reads packed.
struct __attribute__((packed)) NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

}  // namespace

int add_connect_port_rule(int ruleset_fd, uint16_t port) {
  const NetPortAttr attr{kNetConnectTcp, port};
  const long rc = syscall(kSysAddRule, ruleset_fd, kRuleNetPort, &attr, 0U);
  return rc < 0 ? -errno : 0;
}

}  // namespace landlock_run
