// SPDX-License-Identifier: Apache-2.0
// Landlock syscalls (raw: glibc 2.36 has no wrappers).
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace landlock_run {
namespace {

int errno_or(long rc) { return rc < 0 ? -errno : static_cast<int>(rc); }

}  // namespace

long query_kernel_abi() {
  const long rc = syscall(kSysCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  return rc < 0 ? -errno : rc;
}

int create_ruleset(const RulesetAttr& attr) {
  return errno_or(syscall(kSysCreateRuleset, &attr, sizeof(attr), 0U));
}

int add_path_rule(int ruleset_fd, const char* path, uint64_t handled_fs, RuleAccess access,
                  RuleStage* stage) {
  *stage = RuleStage::kOpen;
  // openat, not open: musl's open() follows every O_CLOEXEC open with an fcntl(F_SETFD) for
  // kernels before 2.6.23, one wasted syscall per grant; its openat() does not.
  const int fd = openat(AT_FDCWD, path, O_PATH | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    const int err = -errno;
    close(fd);
    return err;
  }
  // Directory-only rights on a file rule are EINVAL, so reduce them (what makes --rw /dev/null
  // work); on ABI >= 5 IOCTL_DEV survives, so device ioctls on a granted node keep working.
  const bool directory = S_ISDIR(info.st_mode);
  const PathBeneathAttr rule{
      access == RuleAccess::kList
          ? list_access(handled_fs, directory)
          : rule_access(handled_fs, access == RuleAccess::kReadWrite, directory),
      fd};
  if (rule.allowed_access == 0) {
    close(fd);
    return 0;
  }
  *stage = RuleStage::kAddRule;
  const int rc = errno_or(syscall(kSysAddRule, ruleset_fd, kRulePathBeneath, &rule, 0U));
  close(fd);
  return rc;
}

int restrict_self(int ruleset_fd) { return errno_or(syscall(kSysRestrictSelf, ruleset_fd, 0U)); }

}  // namespace landlock_run
