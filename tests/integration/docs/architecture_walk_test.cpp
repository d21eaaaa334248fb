// SPDX-License-Identifier: Apache-2.0
// docs/architecture.md read back against the code. Its table of compositions (between the
// markers `<!-- walk:begin -->` and `<!-- walk:end -->`) is the one expected value: for each row
// the test runs the row's `dsh-sandbox confine` call on the real CLI, on a host set up as the
// row's composition needs (bwrap made unusable through the config for Landlock alone; a copy of
// the install without landlock-run for bwrap alone), and compares the printed `layers` and the
// programs of the printed argv, outermost first, with the row. And every directory under src/
// and launcher/ is named on the page, every such directory the page names exists, and so does
// every source file it names (the walk names one per step).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "files.h"
#include "json.h"
#include "must_run.h"
#include "process.h"
#include "temp_dir.h"

namespace dsh::docs_it {
namespace {

using nlohmann::json;
using testing::RunResult;
using testing::TempDir;
using Words = std::vector<std::string>;

// The command the page writes as CMD; confine runs nothing, so it need not exist.
const Words kCommand = {"/bin/sh", "-c", "exit 0"};

struct Row {
  std::string composition;  // first cell: the name the test knows the host setup by
  Words options;            // between `dsh-sandbox confine` and `-- CMD`
  Words layers;             // the `layers` field, in order
  Words programs;           // basenames of the argv's runners, outermost first
};

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

Words cells(const std::string& line) {
  Words out;
  std::string cell;
  std::istringstream stream(line.substr(1));  // after the leading '|'
  while (std::getline(stream, cell, '|')) out.push_back(trim(cell));
  return out;
}

// The text inside each pair of backticks of `cell`, in order.
Words code_spans(const std::string& cell) {
  Words out;
  const std::regex span("`([^`]*)`");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), span); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

Words split_words(const std::string& text) {
  Words out;
  std::istringstream stream(text);
  for (std::string word; stream >> word;) out.push_back(word);
  return out;
}

// `dsh-sandbox confine OPTIONS... -- CMD` -> OPTIONS.
Words call_options(const std::string& cell) {
  const Words spans = code_spans(cell);
  if (spans.size() != 1) {
    ADD_FAILURE() << "the call cell holds one `dsh-sandbox confine ... -- CMD`: " << cell;
    return {};
  }
  Words words = split_words(spans[0]);
  const Words head = {"dsh-sandbox", "confine"};
  const Words tail = {"--", "CMD"};
  if (words.size() < 4 || !std::equal(head.begin(), head.end(), words.begin()) ||
      !std::equal(tail.begin(), tail.end(), words.end() - 2)) {
    ADD_FAILURE() << "not of the form `dsh-sandbox confine ... -- CMD`: " << spans[0];
    return {};
  }
  return Words(words.begin() + 2, words.end() - 2);
}

std::vector<Row> walk_table() {
  std::ifstream page(ARCHITECTURE_MD);
  EXPECT_TRUE(page.good()) << ARCHITECTURE_MD;
  std::vector<Row> rows;
  bool inside = false;
  for (std::string line; std::getline(page, line);) {
    if (line.find("<!-- walk:begin -->") != std::string::npos) inside = true;
    if (line.find("<!-- walk:end -->") != std::string::npos) inside = false;
    if (!inside || line.rfind("| ", 0) != 0) continue;
    const Words row = cells(line);
    if (row.size() < 4 || row[1].find('`') == std::string::npos) continue;  // the head
    Words programs = code_spans(row[3]);
    rows.push_back({row[0], call_options(row[1]), code_spans(row[2]), programs});
  }
  return rows;
}

std::string directory_of(const std::string& path) { return path.substr(0, path.rfind('/')); }
std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The runners of a confined argv, outermost first: each runner's word, then its arguments up to
// the `--` after which the next runner (or the command) starts.
Words runner_programs(const Words& argv) {
  Words out;
  if (argv.size() < kCommand.size()) return out;
  const std::size_t command_at = argv.size() - kCommand.size();
  std::size_t at = 0;
  while (at < command_at) {
    out.push_back(base_name(argv[at]));
    const auto separator = std::find(argv.begin() + static_cast<std::ptrdiff_t>(at),
                                     argv.begin() + static_cast<std::ptrdiff_t>(command_at), "--");
    at = static_cast<std::size_t>(separator - argv.begin()) + 1;
  }
  return out;
}

class ArchitectureWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    const RunResult probe = testing::execute({DSH_SANDBOX_PATH, "probe", "--json"});
    const json report = testing::parse_json(probe.out);
    if (!report.is_object() || report.value("selected", json()) != "bwrap+landlock") {
      DSH_SKIP_OR_FAIL("this host's chain does not start with bwrap+landlock: " + probe.out);
    }
    // Readable by the other leg's user and written only by its owner: where the trust check
    // accepts a config and a copy of the runners.
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
    workspace_ = dir_.mkdir("workspace");
  }

  // The CLI and the extra options that give the row's composition on this host.
  std::pair<std::string, Words> setup_for(const std::string& composition) const {
    if (composition == "plain run" || composition == "allow-list network") {
      return {DSH_SANDBOX_PATH, {}};
    }
    if (composition == "Landlock alone") {
      const std::string config = dir_ / "no-bwrap.json";
      testing::write_file(config, R"({"bwrapPath": "/nonexistent/docs-walk/bwrap"})");
      return {DSH_SANDBOX_PATH, {"--config", config}};
    }
    if (composition == "bwrap alone") return {install_without("landlock-run"), {}};
    ADD_FAILURE() << "a composition this test cannot set up: " << composition;
    return {};
  }

  // A copy of the programs installed beside the CLI, `left_out` missing.
  std::string install_without(const std::string& left_out) const {
    const std::string bin = dir_.mkdir("without-" + left_out);
    std::ifstream list(DSH_PROGRAMS_LIST);
    for (std::string program; std::getline(list, program);) {
      if (program.empty() || program == left_out) continue;
      std::filesystem::copy_file(directory_of(DSH_SANDBOX_PATH) + "/" + program,
                                 bin + "/" + program);
      EXPECT_EQ(::chmod((bin + "/" + program).c_str(), 0755), 0) << program;
    }
    return bin + "/dsh-sandbox";
  }

  json confine(const Row& row) const {
    const auto [cli, extra] = setup_for(row.composition);
    Words argv = {cli, "confine"};
    argv.insert(argv.end(), row.options.begin(), row.options.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--workspace", workspace_, "--"});
    argv.insert(argv.end(), kCommand.begin(), kCommand.end());
    const RunResult confined = testing::execute(argv);
    EXPECT_TRUE(confined.exited_with(0)) << row.composition << ": " << confined.describe();
    return testing::parse_json(confined.out);
  }

  TempDir dir_;
  std::string workspace_;
};

// Each row of the page's table is what `dsh-sandbox confine` prints for that composition.
TEST_F(ArchitectureWalk, CompositionTableIsWhatConfinePrints) {
  const std::vector<Row> rows = walk_table();
  std::set<std::string> named;
  for (const Row& row : rows) named.insert(row.composition);
  EXPECT_EQ(named, (std::set<std::string>{"plain run", "allow-list network", "Landlock alone",
                                          "bwrap alone"}))
      << "the table's rows, by their first cell";
  for (const Row& row : rows) {
    ASSERT_FALSE(row.programs.empty() || row.programs.back() != "CMD")
        << row.composition << ": the programs cell ends with CMD";
    const Words programs(row.programs.begin(), row.programs.end() - 1);
    const json confined = confine(row);
    ASSERT_TRUE(confined.is_object()) << row.composition;
    EXPECT_EQ(confined["layers"].get<Words>(), row.layers) << row.composition;
    const Words argv = confined["argv"].get<Words>();
    EXPECT_TRUE(std::equal(kCommand.rbegin(), kCommand.rend(), argv.rbegin()))
        << row.composition << ": the argv ends with the command unchanged";
    EXPECT_EQ(runner_programs(argv), programs) << row.composition;
  }
}

// The directories the page names under src/ and launcher/ are exactly those of the tree.
TEST(ArchitecturePage, NamesEverySourceDirectoryAndNoOther) {
  const std::string page = testing::read_file(ARCHITECTURE_MD);
  ASSERT_FALSE(page.empty()) << ARCHITECTURE_MD;
  std::set<std::string> named;
  const std::regex directory(R"(\b((?:src|launcher)/[a-z0-9_-]+)/)");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), directory);
       it != std::sregex_iterator(); ++it) {
    named.insert((*it)[1].str());
  }
  std::set<std::string> present;
  for (const std::string top : {"src", "launcher"}) {
    for (const auto& entry : std::filesystem::directory_iterator(SOURCE_DIR "/" + top)) {
      if (entry.is_directory()) present.insert(top + "/" + entry.path().filename().string());
    }
  }
  EXPECT_EQ(named, present) << "directories named in docs/architecture.md (left) and present "
                               "in the tree (right)";
}

// Every file of the repository the page names by its path (the walk's steps, the runners' homes)
// exists: a renamed or removed file fails here until the page follows.
TEST(ArchitecturePage, EveryFileItNamesExists) {
  const std::string page = testing::read_file(ARCHITECTURE_MD);
  ASSERT_FALSE(page.empty()) << ARCHITECTURE_MD;
  const std::regex file(
      R"((?:^|[^\w/.-])((?:src|launcher|include|tests|man|scripts|bench|bindings|cmake)/)"
      R"([\w./-]+\.(?:cpp|h|py|sh|json|js|ts|txt|cmake)))");
  std::size_t named = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), file); it != std::sregex_iterator();
       ++it) {
    ++named;
    EXPECT_TRUE(std::filesystem::exists(SOURCE_DIR "/" + (*it)[1].str()))
        << (*it)[1].str() << " is named in docs/architecture.md but does not exist";
  }
  EXPECT_GT(named, 20U) << "the page names the walk's files by their paths";
}

}  // namespace
}  // namespace dsh::docs_it
