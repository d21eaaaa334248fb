// SPDX-License-Identifier: Apache-2.0
// Where the runners are. Resolved once, to absolute paths, from places the ambient environment
// cannot choose: never PATH, the working directory or an environment variable.
#pragma once

#include <string>

namespace dsh::sandbox::local {

// `configured` when set; else the first executable among /usr/bin/bwrap, /usr/local/bin/bwrap
// and /bin/bwrap; else /usr/bin/bwrap (whose probe then reports bwrap missing).
std::string locate_bwrap(const std::string& configured);

// landlock-run beside the running executable (/proc/self/exe), as installed with dsh-sandbox;
// empty when /proc/self/exe cannot be read.
std::string launcher_beside_self();

}  // namespace dsh::sandbox::local
