// SPDX-License-Identifier: Apache-2.0
// One process engine: every process the libraries start is started by src/exec, through its
// modes (a run in the foreground or background, a run on a terminal, a detached process), so one
// supervisor design holds every tree. The only other code that may start a process is the
// network proxy's program (dsh-netproxy, an executable of its own: it starts the runner chain
// after it and the bridge inside the sandbox). The check reads the sources: a call of fork, vfork,
// clone, clone3, the exec family, posix_spawn, system, popen or daemon, or the raw syscall
// numbers of those, anywhere else in src/ fails it, naming the file and line. Comments and
// literals are not code: a comment that names execve, or a message that quotes it, is no call.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace dsh::sandbox::exec {
namespace {

namespace fs = std::filesystem;

// Where a process may be started, relative to the repository: a directory (ending in '/') or a
// file. Exact: each entry must hold at least one call (EveryAllowedPlaceStartsProcesses).
constexpr std::array<std::string_view, 2> kAllowed = {
    "src/exec/",               // the process engine
    "src/netproxy/proxy.cpp",  // dsh-netproxy's own process: its child and its bridge
};

constexpr std::size_t kNone = std::string_view::npos;

// One past the end of the comment or literal that starts at `i`, or kNone: none starts there.
std::size_t skip(std::string_view text, std::size_t i) {
  const char c = text[i];
  const char next = i + 1 < text.size() ? text[i + 1] : '\0';
  const auto until = [&text](std::size_t found, std::size_t length) {
    return found == kNone ? text.size() : found + length;
  };
  if (c == '/' && next == '/') return until(text.find('\n', i), 0);
  if (c == '/' && next == '*') return until(text.find("*/", i + 2), 2);
  if (c == '"' && i > 0 && text[i - 1] == 'R') {  // R"delimiter( ... )delimiter"
    const std::size_t open = text.find('(', i);
    if (open == kNone) return text.size();
    const std::string close = ")" + std::string(text.substr(i + 1, open - i - 1)) + "\"";
    return until(text.find(close, open), close.size());
  }
  // A quote after a digit is a digit separator (1'000), not a character literal.
  const bool separator = i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1])) != 0;
  if (c != '"' && (c != '\'' || separator)) return kNone;
  std::size_t j = i + 1;
  while (j < text.size() && text[j] != c) j += text[j] == '\\' ? std::size_t{2} : std::size_t{1};
  return std::min(j + 1, text.size());
}

// The text with comments and string and character literals blanked (newlines kept, so line
// numbers hold).
std::string code_only(std::string_view text) {
  std::string out(text);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t end = skip(text, i);
    if (end == kNone) {
      ++i;
      continue;
    }
    for (; i < end; ++i) {
      if (out[i] != '\n') out[i] = ' ';
    }
  }
  return out;
}

// The 1-based lines of `text` that start a process.
std::vector<int> process_start_lines(std::string_view text) {
  static const std::regex call(
      R"((^|[^A-Za-z0-9_.>])(fork|vfork|clone|clone3|posix_spawnp?|pidfd_spawnp?|execl|execle|)"
      R"(execlp|execv|execve|execvp|execvpe|execveat|fexecve|system|popen|daemon)\s*\()"
      R"(|\b(SYS|__NR)_(fork|vfork|clone|clone3|execve|execveat)\b)");
  std::vector<int> lines;
  std::istringstream code(code_only(text));
  int number = 0;
  for (std::string line; std::getline(code, line);) {
    ++number;
    if (std::regex_search(line, call)) lines.push_back(number);
  }
  return lines;
}

bool allowed(const std::string& path) {
  return std::any_of(kAllowed.begin(), kAllowed.end(), [&path](std::string_view place) {
    return place.ends_with('/') ? path.starts_with(place) : path == place;
  });
}

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Every C++ source and header of src/, as "src/..." paths, with the lines that start a process.
std::vector<std::pair<std::string, std::vector<int>>> scan_sources() {
  std::vector<std::pair<std::string, std::vector<int>>> found;
  const fs::path root = DSH_SOURCE_DIR;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / "src")) {
    const std::string extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".h")) continue;
    found.emplace_back(fs::relative(entry.path(), root).generic_string(),
                       process_start_lines(read_file(entry.path())));
  }
  return found;
}

TEST(ProcessStarts, OnlyExecAndTheProxyProgramStartProcesses) {
  const auto sources = scan_sources();
  ASSERT_GT(sources.size(), 50U) << "src/ not found under " << DSH_SOURCE_DIR;
  std::vector<std::string> offenders;
  for (const auto& [path, lines] : sources) {
    if (allowed(path)) continue;
    for (const int line : lines) offenders.push_back(path + ":" + std::to_string(line));
  }
  EXPECT_TRUE(offenders.empty())
      << "processes are started only by src/exec (its modes: exec::run, exec::start, "
         "exec::start_on_terminal, exec::start_detached) and by dsh-netproxy's own program; "
         "found a call at:\n  "
      << [&offenders] {
           std::string list;
           for (const std::string& each : offenders) list += each + "\n  ";
           return list;
         }();
}

TEST(ProcessStarts, EveryAllowedPlaceStartsProcesses) {
  const auto sources = scan_sources();
  for (const std::string_view place : kAllowed) {
    const bool starts = std::any_of(sources.begin(), sources.end(), [place](const auto& source) {
      return allowed(source.first) && source.first.starts_with(place) && !source.second.empty();
    });
    EXPECT_TRUE(starts) << place << " starts no process any more: drop it from the allowed list";
  }
}

TEST(ProcessStarts, TheScanFindsEveryWayToStartAProcess) {
  for (const std::string_view call :
       {"const pid_t pid = ::fork();", "vfork()", "pid = clone(main, top, CLONE_VM, &arg);",
        "syscall(SYS_clone3, &args, sizeof args);", "syscall(__NR_clone, 0)", "::execve(p, a, e);",
        "execvp (argv[0], argv);", "execl(\"/bin/sh\", \"sh\", nullptr);", "fexecve(fd, a, e)",
        "posix_spawnp(&pid, name, nullptr, nullptr, a, e);", "std::system(command.c_str());",
        "FILE* f = popen(\"ls\", \"r\");", "(void)daemon(0, 0);", "x = 1; ::fork();"}) {
    EXPECT_EQ(process_start_lines(call), std::vector<int>{1}) << call;
  }
}

TEST(ProcessStarts, CommentsLiteralsAndOtherNamesAreNoCalls) {
  for (const std::string_view text :
       {"// fork() here would copy the page tables", "/* execve(bwrap, ...) */ int x = 0;",
        "fail(\"execve(argv) failed\");", "io.notify_fork(asio::io_context::fork_child);",
        "exec_command(plan, error_fd);", "std::string system_name;", "char c = '(';",
        "constexpr int kMillion = 1'000'000; clone_count();", "result.system(x);",
        "spawn->fork(x);"}) {
    EXPECT_TRUE(process_start_lines(text).empty()) << text;
  }
  // A call after a comment that ends on its line, and on the next line of a block comment.
  EXPECT_EQ(process_start_lines("/* a */ ::fork();"), std::vector<int>{1});
  EXPECT_EQ(process_start_lines("/* a\n b */\n::execv(p, a);"), std::vector<int>{3});
  EXPECT_EQ(process_start_lines("x(\"a\\\"b\"); ::fork();"), std::vector<int>{1});
  EXPECT_TRUE(process_start_lines("auto s = R\"x(\" fork() )\" )x\";").empty());
}

}  // namespace
}  // namespace dsh::sandbox::exec
