// SPDX-License-Identifier: Apache-2.0
// The config files of a call, layered: the system's (/etc/dsh-sandbox/config.json), the user's
// ($XDG_CONFIG_HOME/dsh-sandbox/config.json, else ~/.config/dsh-sandbox/config.json), then the
// one --config names; a later file's key replaces an earlier file's value for that key, and the
// call's flags come last (policy/call_policy.h). Every file is held to the trust check --config
// always had: a config a confined run could have written would choose the next run's mode and
// runner, so one that exists and cannot be trusted refuses the call rather than being skipped.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "plan/setup.h"

namespace dsh::sandbox::plan {

struct ConfigFile {
  std::string path;    // absolute
  std::string origin;  // "system", "user" or "--config"
  bool named = false;  // --config: it must exist; a default file may be absent
};

// The files a call reads, in order; `named_path` is --config's (empty: none), made absolute
// against the working directory.
std::vector<ConfigFile> config_files(const std::string& named_path);

// The layered setup of `files`. A default file that does not exist (or whose directory this user
// cannot search) is no layer; an existing one, and the named one always, must pass the trust
// check against `untrusted_roots`, be readable and parse on its own (InvalidSandboxInputError
// naming the file otherwise). `consulted`, when given, gets the files that were read.
Setup load_setup(std::span<const ConfigFile> files, std::span<const std::string> untrusted_roots,
                 std::vector<ConfigFile>* consulted = nullptr);

// load_setup of config_files(named_path).
Setup load_setup(const std::string& named_path, std::span<const std::string> untrusted_roots);

}  // namespace dsh::sandbox::plan
