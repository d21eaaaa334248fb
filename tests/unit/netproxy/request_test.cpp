// SPDX-License-Identifier: Apache-2.0
// The proxy's readers of what a confined command writes: an HTTP request head, the head it
// forwards, and a SOCKS5 greeting and request.
#include <gtest/gtest.h>

#include <string>

#include "netproxy/request.h"

namespace dsh::sandbox::netproxy {
namespace {

using namespace std::string_literals;

TEST(HttpHead, AbsoluteTargetIsSplitAndForwardedWithTheCheckedHost) {
  const std::string bytes =
      "GET http://Allowed.test:8080/a?b HTTP/1.1\r\nHost: other.test\r\nProxy-Authorization: x\r\n"
      "Accept: */*\r\n\r\nbody";
  const HttpParse parsed = parse_http_head(bytes);
  ASSERT_EQ(parsed.state, ParseState::kDone);
  EXPECT_FALSE(parsed.request.connect);
  EXPECT_EQ(parsed.request.authority, "Allowed.test:8080");
  EXPECT_EQ(parsed.request.path, "/a?b");
  EXPECT_EQ(bytes.substr(parsed.request.head_size), "body");
  EXPECT_EQ(
      origin_head(parsed.request.method, parsed.request.path, parsed.request.version,
                  "allowed.test:8080", parsed.request.header_lines),
      "GET /a?b HTTP/1.1\r\nHost: allowed.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n");
}

TEST(HttpHead, ConnectTargetIsTheAuthority) {
  const HttpParse parsed = parse_http_head("CONNECT allowed.test:443 HTTP/1.1\r\n\r\n\x16");
  ASSERT_EQ(parsed.state, ParseState::kDone);
  EXPECT_TRUE(parsed.request.connect);
  EXPECT_EQ(parsed.request.authority, "allowed.test:443");
  EXPECT_EQ(parsed.request.head_size, 37U);
}

TEST(HttpHead, IncompleteHeadAsksForMoreAndAnOversizedOneIsRefused) {
  const HttpParse more = parse_http_head("GET http://a.test/ HTTP/1.1\r\nHost: a");
  EXPECT_EQ(more.state, ParseState::kNeedMore);
  EXPECT_EQ(more.wanted, 37U);
  const HttpParse huge = parse_http_head(std::string(kMaxHead + 1, 'a'));
  EXPECT_EQ(huge.state, ParseState::kRefused);
  EXPECT_EQ(huge.status, 431);
}

// Each a head an origin could read with another Host, or as two requests, than the one checked.
TEST(HttpHead, LinesAnOriginCouldReadDifferentlyAreRefused) {
  for (const std::string& head : {
           "GET http://a.test/ HTTP/1.1\r\nX-A: 1\nHost: b.test\r\n\r\n"s,
           "GET http://a.test/ HTTP/1.1\r\nX-A: 1\rHost: b.test\r\n\r\n"s,
           "GET http://a.test/ HTTP/1.1\r\nHost : b.test\r\n\r\n"s,
           "GET http://a.test/ HTTP/1.1\r\nX-A: 1\r\n Host: b.test\r\n\r\n"s,
           "GET http://a.test/ HTTP/1.1\r\nX-A: 1\0\r\n\r\n"s,
           "GET http://a.test/ HTTP/1.1\r\nno colon\r\n\r\n"s,
           "GET http://a.test/\nHost: b.test HTTP/1.1\r\n\r\n"s,
           "GET http://a.test/ x HTTP/1.1\r\n\r\n"s,
           "G\tT http://a.test/ HTTP/1.1\r\n\r\n"s,
       }) {
    const HttpParse parsed = parse_http_head(head);
    EXPECT_EQ(parsed.state, ParseState::kRefused) << head;
    EXPECT_EQ(parsed.status, 400) << head;
  }
}

TEST(HttpHead, OtherTargetsAndUserInformationAreRefused) {
  EXPECT_EQ(parse_http_head("GET / HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(parse_http_head("GET http://u:p@a.test/ HTTP/1.1\r\n\r\n").body,
            "user information in the URI\n");
  EXPECT_EQ(parse_http_head("GET\r\n\r\n").body, "malformed request line\n");
}

TEST(Socks, GreetingAndDomainRequest) {
  const std::string bytes = "\x05\x02\x02\x00"s + "\x05\x01\x00\x03\x06"s + "a.test" + "\x01\xbb";
  const SocksGreeting greeting = parse_socks_greeting(bytes);
  ASSERT_EQ(greeting.state, ParseState::kDone);
  EXPECT_TRUE(greeting.no_auth);
  EXPECT_EQ(greeting.size, 4U);
  EXPECT_EQ(parse_socks_request(bytes.substr(4, 8)).wanted, 13U);
  const SocksRequest request = parse_socks_request(bytes.substr(4));
  ASSERT_EQ(request.state, ParseState::kDone);
  EXPECT_EQ(request.host, "a.test");
  EXPECT_EQ(request.port, 443);
  EXPECT_EQ(request.size, 13U);
}

TEST(Socks, AddressRequestsAndRefusals) {
  const SocksRequest v4 = parse_socks_request("\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50"s);
  ASSERT_EQ(v4.state, ParseState::kDone);
  EXPECT_EQ(v4.host, "127.0.0.1");
  EXPECT_EQ(v4.port, 80);
  const SocksRequest v6 =
      parse_socks_request("\x05\x01\x00\x04"s + std::string(15, '\0') + "\x01\x1f\x90");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 8080);
  EXPECT_EQ(parse_socks_request("\x05\x02\x00\x01\x7f"s).reply, 0x07);  // BIND
  EXPECT_EQ(parse_socks_request("\x05\x01\x00\x07\x00"s).reply, 0x08);  // no such address type
  EXPECT_FALSE(parse_socks_greeting("\x05\x01\x02"s).no_auth);
  EXPECT_EQ(parse_socks_greeting("\x05\x03\x00"s).wanted, 5U);
}

}  // namespace
}  // namespace dsh::sandbox::netproxy
