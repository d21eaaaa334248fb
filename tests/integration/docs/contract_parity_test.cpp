// SPDX-License-Identifier: Apache-2.0
// docs/contract.md's parity table read back against the item list (docs/contract-items.txt) and
// the test sources: one row per item in the list's order, a status out of four, a counts line
// that agrees with the rows, and proofs that name tests and files that exist. So the table cannot
// go stale without a failing test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// The ids of docs/contract-items.txt, in order: the first word of every line that is neither
// blank nor a comment.
std::vector<std::string> item_ids() {
  std::vector<std::string> ids;
  for (const std::string& line : lines_of(read_text(CONTRACT_ITEMS))) {
    if (trimmed(line).empty() || line.front() == '#') continue;
    ids.push_back(line.substr(0, line.find_first_of(" \t")));
  }
  return ids;
}

struct Row {
  std::string id;
  std::string words;
  std::string status;
  std::string proof;
  int line = 0;  // in docs/contract.md, for the failure messages
};

struct Table {
  std::vector<Row> rows;
  std::vector<std::string> counts_lines;  // the lines inside the markers that are not the table
  bool found = false;
};

// Splits "| a | b | c | d |" into its cells; a line that is not a table line gives none.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      cells.push_back(trimmed(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

Table parity_table() {
  Table table;
  const std::vector<std::string> lines = lines_of(read_text(CONTRACT_MD));
  bool inside = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line == "<!-- parity:begin -->") {
      inside = true;
      table.found = true;
      continue;
    }
    if (line == "<!-- parity:end -->") break;
    if (!inside || trimmed(line).empty()) continue;
    const std::vector<std::string> cells = cells_of(line);
    if (cells.empty()) {
      table.counts_lines.push_back(line);
      continue;
    }
    if (cells.front() == "id" || cells.front().starts_with("---")) continue;  // header
    Row row;
    row.line = static_cast<int>(i + 1);
    if (cells.size() == 4) {
      row.id = cells[0];
      row.words = cells[1];
      row.status = cells[2];
      row.proof = cells[3];
    } else {
      row.id = cells.front();
      row.status = "(a row of " + std::to_string(cells.size()) + " cells, not 4)";
    }
    table.rows.push_back(row);
  }
  return table;
}

const std::set<std::string>& statuses() {
  static const std::set<std::string> known = {"exact", "extension", "departure", "not implemented"};
  return known;
}

// Every Suite.Name that a test macro of the source tree declares (plain, fixture and
// parameterised), read from the sources as they are now.
std::set<std::string> declared_tests() {
  static const std::regex declaration(R"(\b(TEST|TEST_F|TEST_P)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\))");
  std::set<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(TESTS_DIR)) {
    const std::string extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".h")) continue;
    const std::string text = read_text(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), declaration), end; it != end; ++it) {
      names.insert((*it)[2].str() + "." + (*it)[3].str());
    }
  }
  return names;
}

// The `quoted` words of a proof cell.
std::vector<std::string> quoted_words(const std::string& cell) {
  std::vector<std::string> words;
  std::size_t at = 0;
  while ((at = cell.find('`', at)) != std::string::npos) {
    const std::size_t end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    words.push_back(cell.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return words;
}

TEST(ContractParity, TheTableIsBetweenItsMarkersAndEveryItemIdIsWellFormedAndUnique) {
  ASSERT_TRUE(parity_table().found) << "no <!-- parity:begin --> line in " << CONTRACT_MD;
  const std::regex form(R"(\d+(\.\d+)*\.[a-z0-9]+(-[a-z0-9]+)*)");
  std::set<std::string> seen;
  const std::vector<std::string> ids = item_ids();
  EXPECT_GE(ids.size(), 100U) << "the item list looks truncated";
  for (const std::string& id : ids) {
    EXPECT_TRUE(std::regex_match(id, form)) << "malformed item id " << id;
    EXPECT_TRUE(seen.insert(id).second) << "item id listed twice: " << id;
  }
}

TEST(ContractParity, EveryItemHasExactlyOneRowInTheListsOrder) {
  const std::vector<std::string> ids = item_ids();
  const std::set<std::string> known(ids.begin(), ids.end());
  std::vector<std::string> row_ids;
  std::map<std::string, int> rows_per_id;
  for (const Row& row : parity_table().rows) {
    EXPECT_TRUE(known.contains(row.id))
        << "docs/contract.md:" << row.line << " names an id the item list lacks: " << row.id;
    ++rows_per_id[row.id];
    row_ids.push_back(row.id);
  }
  for (const std::string& id : ids) {
    EXPECT_EQ(rows_per_id[id], 1) << "item " << id << " has " << rows_per_id[id] << " rows";
  }
  EXPECT_EQ(row_ids, ids) << "the rows are not in the item list's order";
}

TEST(ContractParity, EveryRowHasOneOfTheFourStatusesAndSaysSomething) {
  for (const Row& row : parity_table().rows) {
    EXPECT_TRUE(statuses().contains(row.status))
        << "docs/contract.md:" << row.line << " " << row.id << ": status " << row.status;
    EXPECT_FALSE(row.words.empty()) << "docs/contract.md:" << row.line << " " << row.id;
    EXPECT_FALSE(row.proof.empty()) << "docs/contract.md:" << row.line << " " << row.id;
  }
}

TEST(ContractParity, TheCountsLineAgreesWithTheRows) {
  const Table table = parity_table();
  std::map<std::string, int> counted;
  for (const Row& row : table.rows) ++counted[row.status];
  const std::string expected = "exact " + std::to_string(counted["exact"]) + " · extension " +
                               std::to_string(counted["extension"]) + " · departure " +
                               std::to_string(counted["departure"]) + " · not implemented " +
                               std::to_string(counted["not implemented"]);
  EXPECT_EQ(table.counts_lines, std::vector<std::string>{expected});
}

// A proof of exact, extension or departure names at least one test or file; every `Suite.Name`
// must be declared in tests/ and every `path/with/slashes` must exist in the source tree. A
// not-implemented row's names, if any, are held to the same rule.
TEST(ContractParity, EveryProofNamesTestsAndFilesThatExist) {
  const std::set<std::string> tests = declared_tests();
  ASSERT_GT(tests.size(), 100U) << "no test declarations found under " << TESTS_DIR;
  const std::regex test_name(R"(\w+\.\w+)");
  const std::regex item_id(R"(\d+(\.\d+)*\.[a-z0-9]+(-[a-z0-9]+)*)");
  const std::vector<std::string> ids = item_ids();
  const std::set<std::string> known(ids.begin(), ids.end());
  for (const Row& row : parity_table().rows) {
    const std::string where = "docs/contract.md:" + std::to_string(row.line) + " " + row.id;
    int named = 0;
    for (const std::string& word : quoted_words(row.proof)) {
      if (std::regex_match(word, item_id)) {  // a pointer to another row
        EXPECT_TRUE(known.contains(word)) << where << ": no item " << word;
        continue;
      }
      if (word.find('/') != std::string::npos) {
        EXPECT_TRUE(fs::exists(fs::path(SOURCE_DIR) / word)) << where << ": no file " << word;
        ++named;
      } else if (std::regex_match(word, test_name)) {
        EXPECT_TRUE(tests.contains(word)) << where << ": no test declares " << word;
        ++named;
      }
    }
    if (row.status != "not implemented") {
      EXPECT_GT(named, 0) << where << ": a " << row.status << " row needs a test or a file";
    }
  }
}

}  // namespace
