// SPDX-License-Identifier: Apache-2.0
// The layered config (plan/config_files.h): system < user < --config key by key, each file read
// through the trust check and parsed on its own, a missing default file no layer.
#include "plan/config_files.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dsh/sandbox/errors.h"
#include "files.h"
#include "temp_dir.h"

namespace dsh::sandbox::plan {
namespace {

using dsh::testing::TempDir;
using dsh::testing::write_file;

class ConfigFilesTest : public ::testing::Test {
 protected:
  ConfigFilesTest() { files_ = {{system_, "system", false}, {user_, "user", false}}; }

  // The message of the refusal load_setup throws, or "" when it loads.
  std::string refusal(const std::vector<std::string>& untrusted = {}) const {
    try {
      static_cast<void>(load_setup(files_, untrusted));
    } catch (const InvalidSandboxInputError& error) {
      return error.what();
    }
    return "";
  }

  TempDir dir_;
  std::string system_ = dir_ / "system.json";
  std::string user_ = dir_ / "user.json";
  std::string named_ = dir_ / "named.json";
  std::vector<ConfigFile> files_;
};

TEST_F(ConfigFilesTest, ALaterFileReplacesAKeyAndEachKeyNamesTheFileItCameFrom) {
  write_file(system_,
             R"({"mode": "workspace-write", "allowCache": ["npm"], "probeTimeoutMs": 7000})");
  write_file(user_, R"({"allowCache": ["pip"], "denyRead": ["/srv/secret"]})");
  write_file(named_, R"({"mode": "read-only"})");
  files_.push_back({named_, "--config", true});
  std::vector<ConfigFile> consulted;
  const plan::Setup setup = load_setup(files_, {}, &consulted);
  EXPECT_EQ(setup.defaults.mode, SandboxMode::kReadOnly);
  EXPECT_EQ(setup.defaults.rules.allow_cache, std::vector<std::string>{"pip"});
  EXPECT_EQ(setup.defaults.rules.deny_read, std::vector<std::string>{"/srv/secret"});
  EXPECT_EQ(setup.provider.probe_timeout_ms, 7000);
  EXPECT_EQ(setup.origins.at("mode"), named_);
  EXPECT_EQ(setup.origins.at("allowCache"), user_);
  EXPECT_EQ(setup.origins.at("probeTimeoutMs"), system_);
  EXPECT_EQ(setup.origins.count("bwrapPath"), 0U);
  EXPECT_EQ(consulted.size(), 3U);
}

TEST_F(ConfigFilesTest, AMissingDefaultFileIsNoLayerButAMissingNamedOneIsAnError) {
  const plan::Setup none = load_setup(files_, {});
  EXPECT_EQ(none.defaults.mode, SandboxMode::kReadOnly);
  EXPECT_TRUE(none.origins.empty());
  files_.push_back({named_, "--config", true});
  EXPECT_NE(refusal().find(named_), std::string::npos);
}

TEST_F(ConfigFilesTest, ABadDefaultFileRefusesTheCallNamingIt) {
  write_file(user_, R"({"mode": "readonly"})");
  const std::string bad = refusal();
  EXPECT_NE(bad.find("user config file \"" + user_ + "\""), std::string::npos) << bad;
  write_file(user_, R"({"mdoe": "read-only"})");
  EXPECT_NE(refusal().find("mdoe"), std::string::npos) << refusal();
}

// A default file beneath a root a confined run could write is refused, not skipped: skipping it
// would drop whatever it narrows (a denyRead, a networkDeny).
TEST_F(ConfigFilesTest, ADefaultFileBeneathAnUntrustedRootRefusesTheCall) {
  write_file(system_, R"({"denyRead": ["/srv/secret"]})");
  const std::string refused = refusal({dir_.path()});
  EXPECT_NE(refused.find("system config file"), std::string::npos) << refused;
  EXPECT_NE(refused.find("cannot be trusted"), std::string::npos) << refused;
}

TEST_F(ConfigFilesTest, TheFilesAreTheSystemsTheUsersAndTheNamedOneInThatOrder) {
  const dsh::testing::ScopedEnv config_home("XDG_CONFIG_HOME", "/srv/conf");
  const std::vector<ConfigFile> files = config_files("/srv/named.json");
  ASSERT_EQ(files.size(), 3U);
  EXPECT_EQ(files[0].path, "/etc/dsh-sandbox/config.json");
  EXPECT_EQ(files[1].path, "/srv/conf/dsh-sandbox/config.json");
  EXPECT_EQ(files[2].path, "/srv/named.json");
  EXPECT_TRUE(files[2].named);
  const dsh::testing::ScopedEnv relative("XDG_CONFIG_HOME", "conf");
  const dsh::testing::ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(config_files("")[1].path, "/home/someone/.config/dsh-sandbox/config.json");
}

}  // namespace
}  // namespace dsh::sandbox::plan
