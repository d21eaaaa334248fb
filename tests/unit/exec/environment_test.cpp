// SPDX-License-Identifier: Apache-2.0
// environment: the ambient scrub and the merge order.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec/exec.h"

namespace dsh::sandbox::exec {
namespace {

bool has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool has_name(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& entry) { return entry.starts_with(name + "="); });
}

TEST(Environment, ScrubsSecretNamesCaseInsensitivelyAnywhereInTheName) {
  for (const char* name : {"API_KEY", "api_key", "MonkeyBusiness", "DB_PASSWORD", "passwordless",
                           "CLIENT_SECRET", "Secrets", "GITHUB_TOKEN", "tokenizer"}) {
    EXPECT_TRUE(is_scrubbed_name(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "LANG", "KE_Y", "PASS", "DSH", "XDSH_MODE"}) {
    EXPECT_FALSE(is_scrubbed_name(name)) << name;
  }
}

TEST(Environment, ScrubsEveryDshName) {
  EXPECT_TRUE(is_scrubbed_name("DSH_"));
  EXPECT_TRUE(is_scrubbed_name("DSH_SANDBOX_MODE"));
  const auto env = build_environment({"DSH_SANDBOX_MODE=danger-full-access", "HOME=/root"}, {}, {});
  EXPECT_FALSE(has_name(env, "DSH_SANDBOX_MODE"));
  EXPECT_TRUE(has(env, "HOME=/root"));
}

TEST(Environment, TerminalOverridesBeatAmbient) {
  const auto env =
      build_environment({"TERM=xterm-256color", "PAGER=less", "PATH=/usr/bin"}, {}, {});
  EXPECT_TRUE(has(env, "NO_COLOR=1"));
  EXPECT_TRUE(has(env, "TERM=dumb"));
  EXPECT_TRUE(has(env, "PAGER=cat"));
  EXPECT_TRUE(has(env, "GIT_PAGER=cat"));
  EXPECT_TRUE(has(env, "PATH=/usr/bin"));
}

TEST(Environment, CallerBeatsOverridesAndManagedBeatsCaller) {
  const auto env = build_environment({"TERM=xterm", "LANG=C"}, {{"TERM", "vt100"}, {"LANG", "fr"}},
                                     {{"LANG", "de"}});
  EXPECT_TRUE(has(env, "TERM=vt100"));
  EXPECT_TRUE(has(env, "LANG=de"));
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) { return e.starts_with("LANG="); }),
            1);
}

TEST(Environment, ExplicitSecretsFromTheCallerOrManagedEnvPass) {
  const auto env = build_environment({"API_KEY=ambient"}, {{"API_KEY", "given"}},
                                     {{"DSH_SESSION_TOKEN", "managed"}});
  EXPECT_TRUE(has(env, "API_KEY=given"));
  EXPECT_TRUE(has(env, "DSH_SESSION_TOKEN=managed"));
}

TEST(Environment, MalformedAmbientEntriesAreDroppedAndTheFirstDuplicateWins) {
  const auto env = build_environment({"NOEQUALS", "=value", "A=1", "A=2", "EMPTY="}, {}, {});
  EXPECT_TRUE(has(env, "A=1"));
  EXPECT_FALSE(has(env, "A=2"));
  EXPECT_TRUE(has(env, "EMPTY="));
  EXPECT_FALSE(has_name(env, "NOEQUALS"));
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) { return e.starts_with("="); }),
            0);
}

// Without inherit_env the request's variables are the whole environment: no default, no scrub.
TEST(Environment, ExactEnvironmentIsTheRequestsAlone) {
  EXPECT_EQ(exact_environment({{"PATH", "/usr/bin:/bin"}}, {}),
            std::vector<std::string>{"PATH=/usr/bin:/bin"});
  EXPECT_EQ(exact_environment({{"A", "1"}, {"API_TOKEN", "t"}}, {{"A", "2"}}),
            (std::vector<std::string>{"A=2", "API_TOKEN=t"}));
}

}  // namespace
}  // namespace dsh::sandbox::exec
