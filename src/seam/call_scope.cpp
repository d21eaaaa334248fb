// SPDX-License-Identifier: Apache-2.0
#include "seam/call_scope.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <functional>
#include <unordered_map>

#include "dsh/sandbox/roots.h"

namespace dsh::sandbox {

struct CallMemory {
  struct Check {
    std::string path;
    std::vector<std::string> roots;
    TrustedKind kind;
    Result<std::string> answer;
  };
  std::vector<Check> checks;
  // Looked up by string_view without a copy of the key (heterogeneous lookup, C++20).
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept {
      return std::hash<std::string_view>{}(text);
    }
  };
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> canonical;
  std::optional<std::string> self;
};

namespace {

thread_local CallMemory* open_memory = nullptr;

// The open scope's memory, when this thread has one.
CallMemory* active() { return open_memory; }

// A child forked with a scope open (exec's supervisor, a job's detached supervisor) serves
// calls of its own: it starts without one. fork(3) runs this in the child's one thread, the
// forking one.
void forget_in_child() { open_memory = nullptr; }

std::string read_self() {
  std::array<char, PATH_MAX> self{};
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  return n > 0 ? std::string(self.data(), static_cast<std::size_t>(n)) : std::string();
}

std::string resolve_root(std::string_view root) {
  std::string canonical = canonical_path(root);
  if (canonical.starts_with('/')) canonical = lexically_normalize(canonical);
  return canonical;
}

}  // namespace

CallScope::CallScope() {
  // Without the fork handler a child could use a parent's answers: then nothing is kept.
  static const bool registered = ::pthread_atfork(nullptr, nullptr, forget_in_child) == 0;
  if (!registered || active() != nullptr) return;
  outer_ = open_memory;
  own_ = std::make_unique<CallMemory>();
  open_memory = own_.get();
}

CallScope::~CallScope() {
  if (own_) open_memory = outer_;
}

std::optional<Result<std::string>> CallScope::find_check(std::string_view path,
                                                         std::span<const std::string> roots,
                                                         TrustedKind kind) {
  const CallMemory* memory = active();
  if (memory == nullptr) return std::nullopt;
  for (const CallMemory::Check& check : memory->checks) {
    if (check.kind == kind && check.path == path &&
        std::equal(check.roots.begin(), check.roots.end(), roots.begin(), roots.end())) {
      return check.answer;
    }
  }
  return std::nullopt;
}

void CallScope::keep_check(std::string_view path, std::span<const std::string> roots,
                           TrustedKind kind, const Result<std::string>& answer) {
  CallMemory* memory = active();
  if (memory == nullptr) return;
  memory->checks.push_back(
      {std::string(path), std::vector<std::string>(roots.begin(), roots.end()), kind, answer});
}

std::optional<std::string> CallScope::find_canonical(std::string_view root) {
  const CallMemory* memory = active();
  if (memory == nullptr) return std::nullopt;
  const auto kept = memory->canonical.find(root);
  if (kept == memory->canonical.end()) return std::nullopt;
  return kept->second;
}

void CallScope::keep_canonical(std::string_view root, const std::string& canonical) {
  if (CallMemory* memory = active()) memory->canonical.emplace(std::string(root), canonical);
}

void CallScope::keep_canonical(std::span<const std::string> canonical_roots) {
  CallMemory* memory = active();
  if (memory == nullptr) return;
  for (const std::string& root : canonical_roots) memory->canonical.emplace(root, root);
}

void CallScope::forget() {
  CallMemory* memory = active();
  if (memory == nullptr) return;
  memory->checks.clear();
  memory->canonical.clear();
  memory->self.reset();
}

std::string self_executable() {
  CallMemory* memory = active();
  if (memory == nullptr) return read_self();
  if (!memory->self) memory->self = read_self();
  return *memory->self;
}

std::string canonical_root(std::string_view root) {
  if (auto kept = CallScope::find_canonical(root)) return std::move(*kept);
  std::string canonical = resolve_root(root);
  CallScope::keep_canonical(root, canonical);
  return canonical;
}

}  // namespace dsh::sandbox
