// SPDX-License-Identifier: Apache-2.0
// A pseudo-terminal of the test's own, as a person's terminal: the test holds the master side
// (keyboard and screen) and a descriptor of the slave side, to look at the terminal's settings
// and input queue from outside as its owner would; programs run on it as their controlling
// terminal. (Started with SpawnOptions::terminal is the one-program form with captured stdout.)
#pragma once

#include <sys/ioctl.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace dsh::testing {

class Pty {
 public:
  explicit Pty(winsize size = {24, 80, 0, 0});
  ~Pty();
  Pty(const Pty&) = delete;
  Pty& operator=(const Pty&) = delete;

  bool ok() const { return slave_ >= 0; }
  int master() const { return master_; }
  int slave() const { return slave_; }

  // Forks argv in a session of its own whose controlling terminal is this one: stdin on the
  // terminal, and stdout and stderr too when `output` (otherwise stdout on /dev/null and stderr
  // the test's). The child's pid (-1 when fork failed); a child that cannot exec exits 127.
  pid_t spawn(const std::vector<std::string>& argv, bool output = true) const;

 private:
  int master_ = -1;
  int slave_ = -1;
};

}  // namespace dsh::testing
