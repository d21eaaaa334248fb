// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the launcher's pure parts: the argument parser (input bytes split on NUL
// into argv) and the ABI table (first bytes read as kernel ABI and cap). It asserts the
// invariants the launcher relies on; any violation aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi.h"
#include "cli.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void check_parse(const std::vector<std::string>& words) {
  std::vector<const char*> argv{"landlock-run"};
  for (const std::string& word : words) argv.push_back(word.c_str());
  const int argc = static_cast<int>(argv.size());
  std::vector<landlock_run::Grant> storage(argv.size());
  const landlock_run::Options options = landlock_run::parse_args(argc, argv.data(), storage.data());
  check(options.grant_count <= argv.size());
  for (std::size_t i = 0; i < options.grant_count; ++i) {
    bool points_into_argv = false;
    for (const char* arg : argv) points_into_argv |= options.grants[i].path == arg;
    check(points_into_argv);
  }
  if (options.action == landlock_run::Action::kRun) {
    check(options.command_index >= 2 && options.command_index < argc);
    check(std::strcmp(argv[static_cast<std::size_t>(options.command_index) - 1], "--") == 0);
  }
  if (options.action == landlock_run::Action::kProbe) check(argc == 2);
  char line[256];
  const int length = landlock_run::format_usage_error(options, line, sizeof(line));
  check(length > 0);
  landlock_run::sanitize_line(line);
  for (const char* c = line; *c != '\0'; ++c) check(static_cast<unsigned char>(*c) >= 0x20);
}

void check_abi(long kernel_abi, int max_abi) {
  const int abi = landlock_run::effective_abi(kernel_abi, max_abi);
  check(abi >= 0 && abi <= 1000);
  check(abi <= kernel_abi || abi == 0);
  if (max_abi >= 0) check(abi <= max_abi);
  const std::uint64_t handled = landlock_run::handled_fs_for_abi(abi);
  check((handled & landlock_run::handled_fs_for_abi(abi + 1)) == handled);
  for (const bool rw : {false, true}) {
    for (const bool dir : {false, true}) {
      const std::uint64_t access = landlock_run::rule_access(handled, rw, dir);
      check((access & ~handled) == 0);
      check(abi < 1 || access != 0);
    }
  }
  check(abi < 1 || landlock_run::is_partial(abi) == (abi < 5));
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 5) {
    const auto kernel_abi = static_cast<long>(static_cast<std::int8_t>(data[0]));
    std::int32_t max_abi = 0;
    std::memcpy(&max_abi, data + 1, sizeof(max_abi));
    check_abi(kernel_abi, max_abi);
  }
  std::vector<std::string> words(1);
  for (std::size_t i = 0; i < size && words.size() < 64; ++i) {
    if (data[i] == '\0') {
      words.emplace_back();
    } else {
      words.back().push_back(static_cast<char>(data[i]));
    }
  }
  check_parse(words);
  return 0;
}
