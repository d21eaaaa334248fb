// SPDX-License-Identifier: Apache-2.0
#include "local/probe_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/io.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "exec/capture.h"
#include "local/private_directory.h"
#include "local/probes.h"
#include "local/runners.h"
#include "policy/host_paths.h"
#include "seam/call_scope.h"
#include "seam/trusted_file.h"

namespace dsh::sandbox::local {

Result<TrustedPath> open_private_directory(const std::string& path,
                                           std::span<const std::string> roots) {
  auto dir = open_trusted_path(path, roots, TrustedKind::kDirectory, false);
  if (!dir) return dir.error();
  struct stat info {};
  if (::fstat(dir.value().fd.get(), &info) != 0 || info.st_uid != ::geteuid() ||
      (info.st_mode & 0077) != 0) {
    return InvalidInput{
        fmt::format("\"{}\" is not a directory of uid {} with mode 0700", path, ::geteuid())};
  }
  return std::move(dir).value();
}

namespace {

std::optional<TrustedPath> private_directory(const std::string& path,
                                             std::span<const std::string> roots) {
  auto dir = open_private_directory(path, roots);
  if (!dir) return std::nullopt;
  return std::move(dir).value();
}

// A stored entry is its key (a few hundred bytes) and a verdict; anything larger is not ours.
constexpr off_t kMaxEntryBytes = 65536;

std::string file_identity(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return path + ":missing";
  return fmt::format("{}:{}:{}:{}:{}.{}", path, info.st_dev, info.st_ino, info.st_size,
                     info.st_mtim.tv_sec, info.st_mtim.tv_nsec);
}

// An entry of the trusted directory: opened without following a symlink, checked on the
// descriptor (a regular 0600 file of this user, not oversized), read through it.
std::string read_owned_entry(const TrustedPath& dir, const std::string& name) {
  const UniqueFd fd(
      ::openat(dir.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return {};
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid() ||
      (info.st_mode & 0077) != 0 || info.st_size > kMaxEntryBytes) {
    return {};
  }
  std::string text;
  if (!io::read_all(fd.get(), text, kMaxEntryBytes).ok()) return {};
  return text;
}

// 64-bit FNV-1a: a stable file name for a key. A collision only makes two keys share a file (the
// key inside decides), never serves one key's verdict to another.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return hash;
}

constexpr std::string_view kEntryPrefix = "verdict-";

// The directory, when no confined run of this call or an earlier one could have written it or
// anything on its way (the trust check against the call's workspace, /tmp, $TMPDIR and `extra`),
// and it is private.
std::optional<TrustedPath> directory_for(const std::string& directory, const SandboxPolicy& policy,
                                         std::span<const std::string> extra) {
  return private_directory(directory, untrusted_roots(policy, extra, user_temp_dir()));
}
// Installs, builds and configs alive at once; each rebuild of dsh-sandbox is a new key.
constexpr std::size_t kMaxEntries = 8;

// Removes the oldest entries beyond kMaxEntries; `keep` (just written) is never one of them.
void prune_entries(const std::string& directory, const std::string& keep) {
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return;
  std::vector<std::pair<std::int64_t, std::string>> entries;  // mtime (ns), path
  // glibc marks readdir MT-Unsafe only for a shared stream (race:dirstream); this one is local.
  while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe)
    const std::string_view name = entry->d_name;
    const std::string path = directory + "/" + std::string(name);
    if (name == "verdict.json") ::unlink(path.c_str());  // the single entry of earlier builds
    if (!name.starts_with(kEntryPrefix) || !name.ends_with(".json")) continue;
    struct stat info {};
    if (path == keep || ::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    entries.emplace_back(info.st_mtim.tv_sec * 1000000000LL + info.st_mtim.tv_nsec, path);
  }
  ::closedir(dir);
  if (entries.size() < kMaxEntries) return;
  std::sort(entries.begin(), entries.end());
  const std::size_t excess = entries.size() - (kMaxEntries - 1);
  for (std::size_t i = 0; i < excess; ++i) ::unlink(entries[i].second.c_str());
}

}  // namespace

UserVerdictStore::UserVerdictStore(std::string directory, std::string key,
                                   std::vector<std::string> untrusted_roots)
    : directory_(std::move(directory)),
      name_(fmt::format("{}{:016x}.json", kEntryPrefix, fnv1a(key))),
      path_(directory_ + "/" + name_),
      key_(std::move(key)),
      untrusted_roots_(std::move(untrusted_roots)) {}

std::optional<std::string> UserVerdictStore::load(const SandboxPolicy& policy) {
  const std::optional<TrustedPath> dir = directory_for(directory_, policy, untrusted_roots_);
  if (!dir) return std::nullopt;
  try {
    const nlohmann::json entry = nlohmann::json::parse(read_owned_entry(*dir, name_));
    if (!entry.is_object() || entry.size() != 2 || entry.at("key").get<std::string>() != key_) {
      return std::nullopt;
    }
    return entry.at("verdict").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void UserVerdictStore::save(const SandboxPolicy& policy, const std::string& verdict) {
  // The parent must pass the check before anything is created in it.
  const std::string parent = directory_.substr(0, directory_.rfind('/'));
  if (!check_trusted_path(parent.empty() ? "/" : parent,
                          untrusted_roots(policy, untrusted_roots_, user_temp_dir()),
                          TrustedKind::kDirectory)) {
    return;
  }
  ::mkdir(directory_.c_str(), 0700);
  const std::optional<TrustedPath> dir = directory_for(directory_, policy, untrusted_roots_);
  if (!dir) return;
  std::array<unsigned char, 8> random{};
  if (::getrandom(random.data(), random.size(), 0) != static_cast<ssize_t>(random.size())) return;
  std::string temp = ".verdict-";
  for (const unsigned char byte : random) temp += fmt::format("{:02x}", byte);
  const UniqueFd fd(::openat(dir->fd.get(), temp.c_str(),
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return;
  const std::string text = nlohmann::json{{"key", key_}, {"verdict", verdict}}.dump();
  const bool written = io::write_all(fd.get(), text) == text.size();
  // rename(2) is atomic: a concurrent reader sees the old entry or the new one, never half.
  if (!written || ::renameat(dir->fd.get(), temp.c_str(), dir->fd.get(), name_.c_str()) != 0) {
    ::unlinkat(dir->fd.get(), temp.c_str(), 0);
    return;
  }
  prune_entries(directory_, path_);
}

void UserVerdictStore::invalidate() { ::unlink(path_.c_str()); }

std::string user_cache_directory() {
  if (::geteuid() == 0) return "/run/dsh-sandbox";
  // Only read here; the CLI never writes its environment.
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");  // NOLINT(concurrency-mt-unsafe)
  if (runtime == nullptr || runtime[0] != '/' ||
      !private_directory(runtime, untrusted_roots("", {}))) {
    return {};
  }
  return std::string(runtime) + "/dsh-sandbox";
}

std::string fallback_jobs_base() {
  if (::geteuid() == 0) return {};
  return fmt::format("/var/tmp/dsh-sandbox-jobs-{}", ::geteuid());
}

std::vector<std::string> private_state_directories(bool create) {
  std::vector<std::string> dirs;
  std::string base = user_cache_directory();
  if (base.empty()) base = fallback_jobs_base();
  // Not made here: the cache and the job store make it only where their trust check passes
  // (never inside a workspace); it exists after the first call that cached a verdict.
  if (!base.empty() && policy::is_directory(base)) dirs.push_back(base);
  const std::string spills = exec::user_spill_path(exec::default_spill_root());
  if (create) (void)exec::user_spill_dir(exec::default_spill_root());
  if (policy::is_directory(spills)) dirs.push_back(spills);
  return dirs;
}

std::string verdict_key(const LocalSandboxConfig& config, const std::string& bwrap,
                        const std::string& launcher) {
  utsname kernel{};
  ::uname(&kernel);
  const std::string exe = self_executable();
  // What decides whether this process can create namespaces or enforce Landlock without a
  // reboot: the userns sysctls, the LSM list, and a seccomp filter on this very process (a
  // container's profile). Without them a verdict probed inside a filtered process would
  // silently downgrade every later unfiltered call to Landlock, and the reverse would hand a
  // filtered caller a bwrap argv that cannot start.
  const HostFacts host = read_host_facts();
  const nlohmann::json key = {
      {"kernel", std::string(kernel.release) + " " + kernel.version},
      {"host",
       {host.apparmor_restrict_userns, host.max_user_namespaces, host.unprivileged_userns_clone,
        host.seccomp_filtered, host.lsm_list}},
      {"uid", ::geteuid()},
      {"self", file_identity(exe)},
      {"bwrap", file_identity(bwrap)},
      {"launcher", file_identity(launcher)},
      {"runnerCommand", config.runner_command},
      {"probeTimeoutMs", config.probe_timeout_ms}};
  return key.dump();
}

std::shared_ptr<VerdictStore> make_user_verdict_store(const LocalSandboxConfig& config,
                                                      const profiles::Runners& runners,
                                                      std::vector<std::string> untrusted_roots) {
  const std::string directory = user_cache_directory();
  if (directory.empty()) return nullptr;
  return std::make_shared<UserVerdictStore>(
      directory, verdict_key(config, runners.bwrap, runners.landlock_run),
      std::move(untrusted_roots));
}

}  // namespace dsh::sandbox::local
