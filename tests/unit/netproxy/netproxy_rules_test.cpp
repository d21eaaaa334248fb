// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/policy.h"
#include "netproxy/rules.h"
#include "netproxy/tls.h"
#include "profiles/netproxy.h"
#include "seam/json_codec.h"
#include "seam/network_entry.h"

namespace dsh::sandbox {
namespace {

TEST(NetworkEntry, CanonicalSpellings) {
  EXPECT_EQ(canonical_network_entry("Registry.NPMJS.org.").value(), "registry.npmjs.org");
  EXPECT_EQ(canonical_network_entry("*.GitHub.com:443").value(), "*.github.com:443");
  EXPECT_EQ(canonical_network_entry("10.1.2.3/8").value(), "10.0.0.0/8");
  EXPECT_EQ(canonical_network_entry("[FD00::1]:8080").value(), "[fd00::1]:8080");
  EXPECT_EQ(canonical_network_entry("FD00::1").value(), "fd00::1");
  EXPECT_EQ(parse_network_list("a.test,,b.test,A.test").value(),
            (std::vector<std::string>{"a.test", "b.test"}));
}

TEST(NetworkEntry, RefusesWhatCannotBeChecked) {
  for (const std::string bad :
       {std::string("evil.test\0.ok.test", 18), std::string("a..b"), std::string("*ok.test"),
        std::string("a.*.test"), std::string("ok.test:0"), std::string("ok.test:65536"),
        std::string("ok.test:+80"), std::string("127.1"), std::string("0x7f.0.0.1"),
        std::string("\xd0\xb0llowed.test"), std::string(64, 'a') + ".test", std::string(""),
        std::string("10.0.0.0/33"), std::string("-a.test")}) {
    EXPECT_FALSE(canonical_network_entry(bad)) << bad;
  }
  EXPECT_FALSE(parse_network_option("allow:"));
  EXPECT_EQ(parse_network_option("deny").value().first, NetworkPolicy::kDeny);
  EXPECT_EQ(parse_network_option("allow:x.test").value().first, NetworkPolicy::kAllowList);
}

TEST(NetProxyRules, DestinationsAreCanonicalOnce) {
  using netproxy::canonical_destination;
  EXPECT_EQ(canonical_destination("ALLOWED.Test.", 80).value().host, "allowed.test");
  EXPECT_EQ(canonical_destination("\xd0\xb0llowed.test", 80).value().host, "xn--llowed-2nf.test");
  EXPECT_FALSE(canonical_destination(std::string("a.test\0.b.test", 14), 80));
  EXPECT_FALSE(canonical_destination("a b.test", 80));
  EXPECT_FALSE(canonical_destination("127.1", 80));
  // A mapped literal keeps its spelling; its bytes are the IPv4 address's, so ranges match.
  EXPECT_EQ(canonical_destination("::FFFF:127.0.0.1", 80).value().host, "::ffff:127.0.0.1");
  EXPECT_FALSE(netproxy::parse_authority("a.test:08x"));
  EXPECT_FALSE(netproxy::parse_authority("a.test"));
}

TEST(NetProxyRules, ListsAndSpecialRanges) {
  const NetworkAllowList list{
      {"allowed.test", "*.allowed.test", "10.0.0.5", "[::1]:8080"}, {"blocked.allowed.test"}, {}};
  const netproxy::Rules rules(list);
  const auto admits = [&](const std::string& host, std::uint16_t port) {
    return rules.admits(netproxy::canonical_destination(host, port).value());
  };
  EXPECT_TRUE(admits("allowed.test", 443));
  EXPECT_TRUE(admits("a.b.allowed.test", 443));
  EXPECT_FALSE(admits("blocked.allowed.test", 443));
  EXPECT_FALSE(admits("BLOCKED.allowed.test.", 443));
  EXPECT_FALSE(admits("notallowed.test", 443));
  EXPECT_FALSE(admits("allowed.test.evil.test", 443));
  EXPECT_TRUE(admits("10.0.0.5", 22));
  EXPECT_FALSE(admits("10.0.0.6", 22));
  EXPECT_TRUE(admits("::1", 8080));
  EXPECT_FALSE(admits("::1", 8081));
  using netproxy::Admission;
  for (const char* special :
       {"127.0.0.1", "10.1.1.1", "169.254.169.254", "100.64.0.1", "224.0.0.1", "0.0.0.0",
        "::", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "255.255.255.255"}) {
    EXPECT_TRUE(netproxy::is_special_address(parse_ip(special).value())) << special;
    EXPECT_FALSE(rules.admits_address(parse_ip(special).value(), 443, Admission::kWildcard))
        << special;
  }
  EXPECT_TRUE(rules.admits_address(parse_ip("10.0.0.5").value(), 443, Admission::kWildcard));
  EXPECT_TRUE(rules.admits_address(parse_ip("93.184.216.34").value(), 443, Admission::kWildcard));
  EXPECT_EQ(rules.admission(netproxy::canonical_destination("allowed.test", 1).value()),
            Admission::kName);
  EXPECT_EQ(rules.admission(netproxy::canonical_destination("a.allowed.test", 1).value()),
            Admission::kWildcard);
  EXPECT_EQ(rules.admission(netproxy::canonical_destination("10.0.0.5", 1).value()),
            Admission::kAddress);
}

TEST(NetProxyRules, AnExactNameReachesPrivateAddressesButNotThisHost) {
  using netproxy::Admission;
  const netproxy::Rules rules(NetworkAllowList{{"mirror.corp.test", "*.corp.test"}, {}, {}});
  // A company mirror on a private address, a CGNAT or ULA one: the listed name reaches it.
  for (const char* reachable : {"10.1.2.3", "172.16.0.9", "192.168.1.1", "100.64.0.1", "fd00::1",
                                "64:ff9b::a01:203", "93.184.216.34"}) {
    EXPECT_TRUE(rules.admits_address(parse_ip(reachable).value(), 443, Admission::kName))
        << reachable;
  }
  // This host: loopback, link-local (cloud metadata), unspecified, also inside IPv6 forms.
  for (const char* local : {"127.0.0.1", "127.8.9.1", "::1", "169.254.169.254", "fe80::1",
                            "0.0.0.0", "::", "::ffff:127.0.0.1", "64:ff9b::7f00:1",
                            "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "::127.0.0.1"}) {
    EXPECT_FALSE(rules.admits_address(parse_ip(local).value(), 443, Admission::kName)) << local;
  }
  // A wildcard's names reach no special range at all; public addresses pass.
  for (const char* special : {"10.1.2.3", "100.64.0.1", "fd00::1", "224.0.0.1", "240.0.0.1"}) {
    EXPECT_FALSE(rules.admits_address(parse_ip(special).value(), 443, Admission::kWildcard))
        << special;
  }
  EXPECT_TRUE(rules.admits_address(parse_ip("93.184.216.34").value(), 443, Admission::kWildcard));
}

TEST(NetProxyRules, ARefusalNamesTheRangeAndTheEntryThatAllowsIt) {
  using netproxy::Admission;
  const netproxy::Rules rules(
      NetworkAllowList{{"mirror.corp.test", "127.0.0.1:8080"}, {"10.9.0.0/16"}, {}});
  const auto why = [&](const char* address, Admission how) {
    return rules.address_refusal(parse_ip(address).value(), 443, how);
  };
  ASSERT_TRUE(why("127.0.0.1", Admission::kName));
  EXPECT_EQ(why("127.0.0.1", Admission::kName)->range, "127.0.0.0/8 (loopback)");
  EXPECT_EQ(why("127.0.0.1", Admission::kName)->entry, "127.0.0.1");
  EXPECT_EQ(why("::1", Admission::kName)->range, "::1/128 (loopback)");
  EXPECT_EQ(why("::1", Admission::kName)->entry, "::1");
  EXPECT_EQ(why("169.254.169.254", Admission::kName)->range,
            "169.254.0.0/16 (link-local (cloud metadata))");
  EXPECT_EQ(why("10.1.2.3", Admission::kWildcard)->range, "10.0.0.0/8 (private)");
  EXPECT_EQ(why("fd00::1", Admission::kWildcard)->entry, "fd00::1");
  // A deny entry wins, and no allow entry is proposed for it.
  EXPECT_EQ(why("10.9.1.1", Admission::kName)->range, "the deny entry 10.9.0.0/16");
  EXPECT_EQ(why("10.9.1.1", Admission::kName)->entry, "");
  // The entry that would allow it does, for its port.
  EXPECT_TRUE(rules.admits_address(parse_ip("127.0.0.1").value(), 8080, Admission::kName));
  EXPECT_FALSE(rules.admits_address(parse_ip("127.0.0.1").value(), 8081, Admission::kName));
}

TEST(NetworkEntry, AUrlIsTakenAsItsHostAndPort) {
  EXPECT_EQ(canonical_network_entry("https://registry.npmjs.org/").value(),
            "registry.npmjs.org:443");
  EXPECT_EQ(canonical_network_entry("http://Mirror.test/").value(), "mirror.test:80");
  EXPECT_EQ(canonical_network_entry("HTTPS://mirror.test:8443/npm/?q#f").value(),
            "mirror.test:8443");
  EXPECT_EQ(canonical_network_entry("http://[::1]/x").value(), "[::1]:80");
  EXPECT_EQ(canonical_network_entry("http://127.0.0.1:4873").value(), "127.0.0.1:4873");
  EXPECT_EQ(parse_network_option("allow:http://a.test/,b.test").value().second,
            (std::vector<std::string>{"a.test:80", "b.test"}));
  EXPECT_FALSE(canonical_network_entry("https://user:pw@a.test/"));
  EXPECT_FALSE(canonical_network_entry("gopher://a.test/"));
  EXPECT_FALSE(canonical_network_entry("https:///path"));
  EXPECT_FALSE(canonical_network_entry("https://a.test:0/"));
  EXPECT_EQ(network_list_notes("b.test,https://a.test/x"),
            (std::vector<std::string>{
                "network entry \"https://a.test/x\" is a URL; taken as a.test:443 (its host and "
                "port)"}));
  EXPECT_TRUE(network_list_notes("a.test,10.0.0.0/8").empty());
}

TEST(NetProxyRules, LearnProposesRefusedHosts) {
  EXPECT_EQ(netproxy::proposed_allow_entries(
                {"evil.test:443", "evil.test:80", "10.0.0.9:22", "[fd00::1]:80", "garbage"}),
            (std::vector<std::string>{"evil.test", "10.0.0.9", "fd00::1"}));
}

std::string client_hello(const std::string& name) {
  std::string ext;
  if (!name.empty()) {
    const std::size_t n = name.size();
    const std::string sni =
        std::string(1, '\0') + static_cast<char>(n + 3) + '\0' + '\0' + static_cast<char>(n) + name;
    ext = std::string{0, 0} + '\0' + static_cast<char>(sni.size()) + sni;
  }
  std::string body = std::string{3, 3} + std::string(32, 'r') + '\0' + std::string{0, 2, 0x13, 1} +
                     std::string{1, 0} + '\0' + static_cast<char>(ext.size()) + ext;
  std::string hs = std::string(1, 1) + '\0' + '\0' + static_cast<char>(body.size()) + body;
  return std::string{0x16, 3, 1} + '\0' + static_cast<char>(hs.size()) + hs;
}

TEST(NetProxyTls, ReadsTheServerName) {
  using netproxy::HelloState;
  EXPECT_EQ(netproxy::read_client_hello(client_hello("allowed.test")).name, "allowed.test");
  EXPECT_EQ(netproxy::read_client_hello(client_hello("")).state, HelloState::kNoSni);
  EXPECT_EQ(netproxy::read_client_hello("").state, HelloState::kNeedMore);
  EXPECT_EQ(netproxy::read_client_hello(client_hello("a.test").substr(0, 20)).state,
            HelloState::kNeedMore);
  EXPECT_EQ(netproxy::read_client_hello("GET / HTTP/1.1\r\n").state, HelloState::kNotTls);
  std::string broken = client_hello("a.test");
  broken[5] = 2;  // not a ClientHello
  EXPECT_EQ(netproxy::read_client_hello(broken).state, HelloState::kMalformed);
}

TEST(NetProxyProfile, EnvironmentNamesEveryClient) {
  const auto env = profiles::netproxy_environment();
  for (const char* name :
       {"HTTP_PROXY", "https_proxy", "ALL_PROXY", "NO_PROXY", "npm_config_https_proxy", "PIP_PROXY",
        "CARGO_HTTP_PROXY", "GIT_CONFIG_VALUE_0", "JAVA_TOOL_OPTIONS"}) {
    EXPECT_TRUE(std::any_of(env.begin(), env.end(), [&](const auto& e) { return e.first == name; }))
        << name;
  }
  EXPECT_TRUE(profiles::netproxy_unsupported_reason(false).has_value());
  EXPECT_FALSE(profiles::netproxy_unsupported_reason(true).has_value());
}

}  // namespace
}  // namespace dsh::sandbox

namespace dsh::sandbox {
namespace {

TEST(NetworkPolicyJson, EntriesAreCanonicalisedOnceAndRoundTrip) {
  const auto parsed = json::sandbox_policy_from_value(
      nlohmann::json{{"mode", "read-only"},
                     {"workspaceRoot", "/ws"},
                     {"network", "allow-list"},
                     {"networkAllow", {"Registry.NPMJS.org.", "*.github.com"}},
                     {"networkDeny", {"gist.github.com"}}});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value().network, NetworkPolicy::kAllowList);
  EXPECT_EQ(parsed.value().network_allow.allow,
            (std::vector<std::string>{"registry.npmjs.org", "*.github.com"}));
  const nlohmann::json back = json::to_value(parsed.value());
  EXPECT_EQ(back["network"], "allow-list");
  EXPECT_EQ(back["networkDeny"], nlohmann::json({"gist.github.com"}));
  EXPECT_EQ(json::sandbox_policy_from_value(back).value(), parsed.value());
  // Entries with another policy are an error, not silently ignored.
  EXPECT_FALSE(json::sandbox_policy_from_value(nlohmann::json{
      {"mode", "read-only"}, {"workspaceRoot", "/ws"}, {"networkAllow", {"a.test"}}}));
  SandboxPolicy raw;
  raw.workspace_root = "/ws";
  raw.network = NetworkPolicy::kAllowList;
  raw.network_allow.allow = {"A.test"};
  EXPECT_FALSE(validate_policy(raw));
}

}  // namespace
}  // namespace dsh::sandbox
