// SPDX-License-Identifier: Apache-2.0
// Handshakes instead of fixed sleeps: wait for an observable condition, with a deadline.
#pragma once

#include <chrono>
#include <string>
#include <thread>

namespace dsh::testing {

// Polls `done` every 10 ms until it holds (true) or `limit` passed (false, after one last look).
template <typename Done>
bool wait_until(Done done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// A server's port, from the file it writes (whole, by rename) once it listens: 0 when none came
// within `limit`.
int wait_for_port_file(const std::string& path,
                       std::chrono::milliseconds limit = std::chrono::seconds(10));

// Makes a FIFO at `path` (0666, so a run as another user can open it).
void make_fifo(const std::string& path);

// Opens the FIFO at `path` for writing once a reader has it open (O_NONBLOCK fails with ENXIO
// until then), waiting up to `limit`: -1 when no reader came. Closing it lets the reader go on.
int open_fifo_when_read(const std::string& path,
                        std::chrono::milliseconds limit = std::chrono::seconds(20));

}  // namespace dsh::testing
