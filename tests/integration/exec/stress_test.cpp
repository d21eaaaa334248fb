// SPDX-License-Identifier: Apache-2.0
// 200 concurrent runs from 200 threads: each gets its own output and status, none of another's.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "exec_helpers.h"

namespace dsh::sandbox::exec {
namespace {

constexpr int kRuns = 200;

TEST(Stress, TwoHundredConcurrentRunsEachGetTheirOwnOutputAndStatus) {
  std::vector<Completion> results(kRuns);
  std::vector<std::string> streamed(kRuns);
  std::vector<std::thread> threads;
  threads.reserve(kRuns);
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([i, &results, &streamed] {
      const std::string marker = "marker-" + std::to_string(i) + "-end";
      Request request;
      request.argv = {"/bin/sh", "-c", "echo " + marker + "; echo " + marker + " >&2; exit $1",
                      "sh", std::to_string(i % 100)};
      request.timeout_ms = 60'000;  // a bound against hangs, never a timing assertion
      request.on_stdout = [&, i](std::string_view chunk) {
        streamed[static_cast<std::size_t>(i)] += chunk;
      };
      results[static_cast<std::size_t>(i)] = run(request);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kRuns; ++i) {
    const Completion& result = results[static_cast<std::size_t>(i)];
    const std::string line = "marker-" + std::to_string(i) + "-end\n";
    EXPECT_FALSE(result.spawn_error.has_value()) << i << ": " << result.spawn_error->message();
    EXPECT_EQ(result.exit_code, i % 100) << i;
    EXPECT_EQ(result.out.tail, line) << i;
    EXPECT_EQ(result.err.tail, line) << i;
    EXPECT_EQ(streamed[static_cast<std::size_t>(i)], line) << i;
    EXPECT_FALSE(result.timed_out || result.aborted) << i;
  }
}

}  // namespace
}  // namespace dsh::sandbox::exec
