// SPDX-License-Identifier: Apache-2.0
#include "profiles/denial_line.h"

#include <charconv>
#include <cstddef>

namespace dsh::sandbox::profiles {
namespace {

constexpr std::string_view kRecordPrefix = "denial ";
constexpr std::string_view kDroppedPrefix = "denials-dropped ";
constexpr std::string_view kHex = "0123456789ABCDEF";

bool needs_escape(unsigned char byte) { return byte <= 0x20 || byte >= 0x7f || byte == '%'; }

int hex_value(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'A' && digit <= 'F') return digit - 'A' + 10;
  return -1;  // lower case is not what any encoder writes: refuse it, one spelling per byte
}

bool is_word(std::string_view word) {
  if (word.empty()) return false;
  for (const char c : word) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

template <typename T>
std::optional<T> parse_decimal(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "key=value" at the front of `rest` (fields are separated by one space); advances `rest`.
std::optional<std::string_view> take_field(std::string_view& rest, std::string_view key) {
  if (rest.substr(0, key.size()) != key || rest.size() <= key.size() || rest[key.size()] != '=') {
    return std::nullopt;
  }
  rest.remove_prefix(key.size() + 1);
  const std::size_t space = rest.find(' ');
  const std::string_view value = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  return value;
}

}  // namespace

std::string percent_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (needs_escape(byte)) {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (text[i] != '%') {
      if (needs_escape(byte)) return std::nullopt;  // a raw byte an encoder would have escaped
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;  // a '%' without two digits after it
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>((high << 4) | low);
    i += 2;
  }
  return out;
}

std::string encode_denial_line(const Denial& denial) {
  std::string line(kRecordPrefix);
  line += "op=" + denial.op;
  line += " rule=" + denial.rule;
  line += " pid=" + (denial.pid ? std::to_string(*denial.pid) : std::string("-"));
  line += " exe=" + percent_encode(denial.exe);
  line += " path=" + percent_encode(denial.path);
  if (!denial.detail.empty()) line += " detail=" + percent_encode(denial.detail);
  line += '\n';
  return line;
}

std::string encode_dropped_line(std::uint64_t dropped) {
  return std::string(kDroppedPrefix) + std::to_string(dropped) + '\n';
}

std::optional<Denial> decode_denial_line(std::string_view line) {
  if (line.substr(0, kRecordPrefix.size()) != kRecordPrefix) return std::nullopt;
  std::string_view rest = line.substr(kRecordPrefix.size());
  const auto op = take_field(rest, "op");
  const auto rule = op ? take_field(rest, "rule") : std::nullopt;
  const auto pid = rule ? take_field(rest, "pid") : std::nullopt;
  const auto exe = pid ? take_field(rest, "exe") : std::nullopt;
  const auto path = exe ? take_field(rest, "path") : std::nullopt;
  // An optional last field: the launcher never writes it, the network proxy may.
  const auto detail = path && !rest.empty() ? take_field(rest, "detail") : std::nullopt;
  if (!path || !rest.empty() || !is_word(*op) || !is_word(*rule)) return std::nullopt;
  Denial denial{.op = std::string(*op), .rule = std::string(*rule)};
  if (*pid != "-") {
    denial.pid = parse_decimal<int>(*pid);
    if (!denial.pid || *denial.pid <= 0) return std::nullopt;
  }
  auto decoded_exe = percent_decode(*exe);
  auto decoded_path = percent_decode(*path);
  if (!decoded_exe || !decoded_path) return std::nullopt;
  denial.exe = std::move(*decoded_exe);
  denial.path = std::move(*decoded_path);
  if (detail) {
    auto decoded_detail = percent_decode(*detail);
    if (!decoded_detail || decoded_detail->empty()) return std::nullopt;
    denial.detail = std::move(*decoded_detail);
  }
  return denial;
}

std::optional<std::uint64_t> decode_dropped_line(std::string_view line) {
  if (line.substr(0, kDroppedPrefix.size()) != kDroppedPrefix) return std::nullopt;
  return parse_decimal<std::uint64_t>(line.substr(kDroppedPrefix.size()));
}

bool collect_denials(std::string_view status, DenialEvidence& evidence) {
  bool found = false;
  while (!status.empty()) {
    const std::size_t newline = status.find('\n');
    const std::string_view line = status.substr(0, newline);
    status = newline == std::string_view::npos ? std::string_view{} : status.substr(newline + 1);
    if (auto denial = decode_denial_line(line)) {
      found = true;
      ++evidence.total;
      if (evidence.records.size() < kMaxDenialRecords) {
        evidence.records.push_back(std::move(*denial));
      }
    } else if (const auto dropped = decode_dropped_line(line)) {
      found = true;
      evidence.total += *dropped;
    }
  }
  return found;
}

std::string without_denial_lines(std::string_view status) {
  std::string rest;
  while (!status.empty()) {
    const std::size_t newline = status.find('\n');
    const std::string_view line = status.substr(0, newline);
    status = newline == std::string_view::npos ? std::string_view{} : status.substr(newline + 1);
    if (decode_denial_line(line) || decode_dropped_line(line)) continue;
    rest += line;
    if (newline != std::string_view::npos) rest += '\n';
  }
  return rest;
}

}  // namespace dsh::sandbox::profiles
