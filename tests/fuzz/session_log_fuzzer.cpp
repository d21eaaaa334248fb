// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the session JSONL reader: a session log is a file the caller names, and
// any process of the user may have written it, so opening it must take any bytes without
// crashing and refuse with InvalidSandboxInputError only. What it accepts must be a header the
// writer could have made (a non-empty NUL-free id, an absolute cwd), and the mode events it
// reads, written to a fresh log through the one write path, must read back as the same modes.
// Any violation aborts, which libFuzzer reports as a crash.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/policy_service.h"

namespace {

using dsh::sandbox::SessionLog;

void check(bool condition) {
  if (!condition) std::abort();
}

// A private directory for this fuzzing process, removed when it exits.
struct Scratch {
  Scratch() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dsh-fuzz-XXXXXX").string();
    check(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  std::string dir;
};

void write_all(const std::string& path, const std::uint8_t* data, std::size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    check(n > 0);
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Scratch scratch;
  const std::string input = scratch.dir + "/input.jsonl";
  const std::string copy = scratch.dir + "/copy.jsonl";
  write_all(input, data, size);
  try {
    const SessionLog log = SessionLog::open(input);
    check(!log.id().empty() && log.id().find('\0') == std::string::npos);
    check(!log.cwd() ||
          (log.cwd()->starts_with('/') && log.cwd()->find('\0') == std::string::npos));
    const auto events = log.sandbox_mode_events();
    check(log.sandbox_mode_events() == events);  // reading again gives the same events
    (void)log.written_workspaces();

    std::filesystem::remove(copy);
    const SessionLog fresh = SessionLog::create(copy, log.id(), log.cwd());
    for (const auto& event : events) dsh::sandbox::set_sandbox_mode(fresh, event.mode);
    const SessionLog reopened = SessionLog::open(copy);
    check(reopened.id() == log.id() && reopened.cwd() == log.cwd());
    const auto written = reopened.sandbox_mode_events();
    check(written.size() == events.size());
    for (std::size_t i = 0; i < events.size(); ++i) check(written[i].mode == events[i].mode);
    check(dsh::sandbox::effective_sandbox_mode(written) ==
          dsh::sandbox::effective_sandbox_mode(events));
  } catch (const dsh::sandbox::InvalidSandboxInputError& error) {
    check(std::string(error.what()).find("session log") != std::string::npos);
  }
  return 0;
}
