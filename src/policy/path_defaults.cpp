// SPDX-License-Identifier: Apache-2.0
#include "policy/path_defaults.h"

#include <cstdlib>

namespace dsh::sandbox::policy {

namespace {

// NOLINTNEXTLINE(modernize-avoid-c-arrays)
constexpr std::string_view kSecrets[] = {
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".pgpass",
    ".my.cnf",
    ".gem/credentials",
    ".m2/settings-security.xml",
    ".config/op",
};

// NOLINTNEXTLINE(modernize-avoid-c-arrays)
constexpr std::string_view kStartupFiles[] = {
    ".profile",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".zshenv",
    ".zshrc",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".inputrc",
    ".config/fish",
    ".gitconfig",
    ".config/git",
    ".vimrc",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    ".config/environment.d",
    ".pam_environment",
    ".config/dsh-sandbox",
    ".config/autostart",
    ".config/systemd",
};

// A variable's value when it is an absolute path, else empty.
std::string absolute_env(const EnvLookup& env, std::string_view name) {
  std::string value = env(name);
  return value.starts_with('/') ? value : std::string();
}

std::string or_default(const std::string& value, const std::string& fallback) {
  return value.empty() ? fallback : value;
}

}  // namespace

std::span<const std::string_view> home_secrets() { return kSecrets; }

std::span<const std::string_view> home_startup_files() { return kStartupFiles; }

EnvLookup process_env() {
  return [](std::string_view name) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, nothing here calls setenv
    const char* value = std::getenv(std::string(name).c_str());
    return value == nullptr ? std::string() : std::string(value);
  };
}

std::vector<std::string> cache_preset_dirs(std::string_view name, std::string_view home,
                                           const EnvLookup& env) {
  const std::string h(home);
  const std::string xdg_cache = or_default(absolute_env(env, "XDG_CACHE_HOME"), h + "/.cache");
  const std::string xdg_data = or_default(absolute_env(env, "XDG_DATA_HOME"), h + "/.local/share");
  if (name == "npm") return {or_default(absolute_env(env, "npm_config_cache"), h + "/.npm")};
  if (name == "yarn") {
    return {or_default(absolute_env(env, "YARN_CACHE_FOLDER"), xdg_cache + "/yarn")};
  }
  if (name == "pnpm") {
    return {or_default(absolute_env(env, "npm_config_store_dir"), xdg_data + "/pnpm"),
            xdg_cache + "/pnpm"};
  }
  if (name == "bun") {
    return {or_default(absolute_env(env, "BUN_INSTALL_CACHE_DIR"), h + "/.bun/install/cache")};
  }
  if (name == "pip") {
    return {or_default(absolute_env(env, "PIP_CACHE_DIR"), xdg_cache + "/pip")};
  }
  if (name == "uv") return {or_default(absolute_env(env, "UV_CACHE_DIR"), xdg_cache + "/uv")};
  if (name == "cargo") {
    // The registry and git checkouts only: CARGO_HOME/bin and config.toml are executed and
    // trusted by the person's next cargo, so they stay read-only.
    const std::string cargo_home = or_default(absolute_env(env, "CARGO_HOME"), h + "/.cargo");
    return {cargo_home + "/registry", cargo_home + "/git"};
  }
  if (name == "go") {
    const std::string gopath = or_default(absolute_env(env, "GOPATH"), h + "/go");
    return {or_default(absolute_env(env, "GOMODCACHE"), gopath + "/pkg/mod"),
            or_default(absolute_env(env, "GOCACHE"), xdg_cache + "/go-build")};
  }
  if (name == "maven") return {h + "/.m2/repository"};
  if (name == "gradle") {
    const std::string gradle_home =
        or_default(absolute_env(env, "GRADLE_USER_HOME"), h + "/.gradle");
    return {gradle_home + "/caches", gradle_home + "/wrapper"};
  }
  if (name == "ccache") {
    return {or_default(absolute_env(env, "CCACHE_DIR"), xdg_cache + "/ccache")};
  }
  return {};
}

}  // namespace dsh::sandbox::policy
