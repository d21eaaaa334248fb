// SPDX-License-Identifier: Apache-2.0
#include "policy/path_defaults.h"

#include <cstdlib>

#include <fmt/format.h>

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

// Whatever a shell, git, Python, node, ssh, a package manager or the desktop session reads or
// runs at start-up from a home directory. Each is kept read-only when a writable root reaches it,
// whether or not it exists: a missing one must not become creatable. A directory stands for
// everything in it.
// NOLINTNEXTLINE(modernize-avoid-c-arrays)
constexpr std::string_view kStartupFiles[] = {
    // shells
    ".profile",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",  // sourced by Debian's and Ubuntu's default .bashrc
    ".bash_completion",
    ".zshenv",
    ".zshrc",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".inputrc",
    ".config/fish",
    // the login session and the desktop
    ".pam_environment",
    ".xprofile",
    ".xsession",
    ".xsessionrc",
    ".xinitrc",
    ".config/environment.d",
    ".config/autostart",
    ".config/systemd",  // user units: started by the user's systemd, outside any sandbox
    // git
    ".gitconfig",
    ".config/git",  // config, attributes, ignore
    // ssh: config (ProxyCommand, LocalCommand), authorized_keys, rc, environment
    ".ssh",
    // editors and terminal multiplexers
    ".vimrc",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    // executables on the PATH a login shell sets up
    ".local/bin",
    "bin",
    // Python: the startup file, and the user site (usercustomize.py and every .pth run at
    // each interpreter start) for every version at once
    ".pythonrc",
    ".pythonrc.py",
    ".pythonstartup",
    ".local/lib",
    // node, npm, yarn
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".config/yarn",
    // cargo: its config (build.rustflags, linkers, runners) and installed binaries
    ".cargo/config",
    ".cargo/config.toml",
    ".cargo/bin",
    ".cargo/env",
    // the sandbox's own config
    ".config/dsh-sandbox",
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

std::optional<std::string> cache_preset_refusal(std::string_view name) {
  if (name == "pnpm" || name == "bun" || name == "uv") {
    return fmt::format(
        "the {} cache preset is refused: {} links the files of its store into every project's "
        "packages (hard links by default on Linux), so a write in the store changes code other "
        "projects run outside the sandbox. Point the tool's store at a directory inside the "
        "workspace or an --allow-write directory used only by confined runs",
        name, name);
  }
  if (name == "maven" || name == "gradle") {
    return fmt::format(
        "the {} cache preset is refused: {} loads plugin and build-script jars straight from its "
        "cache{}, so a jar written there runs in the next build outside the sandbox. Point the "
        "tool's home at a directory inside the workspace or an --allow-write directory used only "
        "by confined runs",
        name, name, name == "gradle" ? " and runs the Gradle distributions in wrapper/dists" : "");
  }
  return std::nullopt;
}

std::vector<std::string> cache_preset_dirs(std::string_view name, std::string_view home,
                                           const EnvLookup& env) {
  const std::string h(home);
  const std::string xdg_cache = or_default(absolute_env(env, "XDG_CACHE_HOME"), h + "/.cache");
  if (name == "npm") {
    // The content-addressed store only, whose every read npm checks against the digest in its
    // name: not _npx, whose installed packages the next npx runs, nor _logs.
    return {or_default(absolute_env(env, "npm_config_cache"), h + "/.npm") + "/_cacache"};
  }
  if (name == "yarn") {
    return {or_default(absolute_env(env, "YARN_CACHE_FOLDER"), xdg_cache + "/yarn")};
  }
  if (name == "pip") {
    return {or_default(absolute_env(env, "PIP_CACHE_DIR"), xdg_cache + "/pip")};
  }
  if (name == "cargo") {
    // The index, the downloaded .crate archives and the git databases, which cargo unpacks
    // before use: not registry/src and git/checkouts, which it builds in place (build.rs runs),
    // nor bin/ and config.toml.
    const std::string cargo_home = or_default(absolute_env(env, "CARGO_HOME"), h + "/.cargo");
    return {cargo_home + "/registry/index", cargo_home + "/registry/cache", cargo_home + "/git/db"};
  }
  if (name == "go") {
    // The module download cache (zips, go.mod files and their hashes), which go unpacks before
    // use: not the unpacked modules beside it, which go builds and runs in place, nor GOCACHE,
    // whose compiled packages the next build links unchecked.
    const std::string gopath = or_default(absolute_env(env, "GOPATH"), h + "/go");
    return {or_default(absolute_env(env, "GOMODCACHE"), gopath + "/pkg/mod") + "/cache/download"};
  }
  if (name == "ccache") {
    return {or_default(absolute_env(env, "CCACHE_DIR"), xdg_cache + "/ccache")};
  }
  return {};
}

}  // namespace dsh::sandbox::policy
