// SPDX-License-Identifier: Apache-2.0
// RFC 8446 section 4.1.2 (ClientHello) and RFC 6066 section 3 (server_name).
#include "netproxy/tls.h"

#include <cstdint>

namespace dsh::sandbox::netproxy {

namespace {

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  std::size_t left() const { return bytes_.size() - at_; }
  std::uint32_t number(std::size_t width) {
    if (left() < width) {
      ok_ = false;
      return 0;
    }
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      value = (value << 8) | static_cast<unsigned char>(bytes_[at_ + i]);
    }
    at_ += width;
    return value;
  }
  std::string_view take(std::size_t count) {
    if (left() < count) {
      ok_ = false;
      return {};
    }
    const std::string_view out = bytes_.substr(at_, count);
    at_ += count;
    return out;
  }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

constexpr std::size_t kRecordHeader = 5;
constexpr unsigned char kHandshake = 0x16;
constexpr unsigned kClientHello = 1;
constexpr unsigned kServerName = 0;

}  // namespace

Hello read_client_hello(std::string_view bytes) {
  if (bytes.empty()) return {HelloState::kNeedMore, {}, 1};  // nothing from the client yet
  if (static_cast<unsigned char>(bytes[0]) != kHandshake) return {};
  if (bytes.size() < kRecordHeader) return {HelloState::kNeedMore, {}, kRecordHeader};
  Reader header(bytes.substr(0, kRecordHeader));
  header.number(1);
  header.number(2);  // legacy record version
  const std::size_t length = header.number(2);
  if (length == 0 || length > 16384 + 256) return {HelloState::kMalformed, {}, 0};
  if (bytes.size() < kRecordHeader + length) {
    return {HelloState::kNeedMore, {}, kRecordHeader + length};
  }
  Reader record(bytes.substr(kRecordHeader, length));
  if (record.number(1) != kClientHello) return {HelloState::kMalformed, {}, 0};
  const std::size_t hello_length = record.number(3);
  if (!record.ok() || hello_length > record.left()) return {HelloState::kMalformed, {}, 0};
  Reader hello(record.take(hello_length));
  hello.number(2);              // legacy_version
  hello.take(32);               // random
  hello.take(hello.number(1));  // legacy_session_id
  hello.take(hello.number(2));  // cipher_suites
  hello.take(hello.number(1));  // legacy_compression_methods
  if (!hello.ok()) return {HelloState::kMalformed, {}, 0};
  if (hello.left() == 0) return {HelloState::kNoSni, {}, 0};  // no extensions at all
  Reader extensions(hello.take(hello.number(2)));
  if (!hello.ok()) return {HelloState::kMalformed, {}, 0};
  Hello out{HelloState::kNoSni, {}, 0};
  while (extensions.ok() && extensions.left() > 0) {
    const std::uint32_t type = extensions.number(2);
    Reader body(extensions.take(extensions.number(2)));
    if (!extensions.ok()) return {HelloState::kMalformed, {}, 0};
    if (type != kServerName) continue;
    if (out.state == HelloState::kSni) return {HelloState::kMalformed, {}, 0};  // twice
    Reader list(body.take(body.number(2)));
    // Exactly one host_name entry: a second one is how a client could ask a server for one
    // name while we checked another.
    const std::uint32_t name_type = list.number(1);
    const std::string_view name = list.take(list.number(2));
    if (!list.ok() || !body.ok() || list.left() != 0 || name_type != 0 || name.empty()) {
      return {HelloState::kMalformed, {}, 0};
    }
    out = {HelloState::kSni, std::string(name), 0};
  }
  if (!extensions.ok()) return {HelloState::kMalformed, {}, 0};
  return out;
}

}  // namespace dsh::sandbox::netproxy
