// SPDX-License-Identifier: Apache-2.0
// Honest skips for tests that need a host feature (user namespaces, Landlock, a pty, bwrap).
// CI sets DSH_SANDBOX_TESTS_MUST_RUN=1, which turns every such skip into a failure, so a host
// that silently lacks the feature can never produce a green run that proved nothing.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace dsh::testing {

inline bool tests_must_run() {
  const char* value = std::getenv("DSH_SANDBOX_TESTS_MUST_RUN");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace dsh::testing

// Skips the current test with `reason`, or fails it when DSH_SANDBOX_TESTS_MUST_RUN=1.
#define DSH_SKIP_OR_FAIL(reason)                                                                \
  do {                                                                                          \
    if (::dsh::testing::tests_must_run()) {                                                     \
      GTEST_FAIL() << "required by DSH_SANDBOX_TESTS_MUST_RUN=1 but unavailable: " << (reason); \
    }                                                                                           \
    GTEST_SKIP() << (reason);                                                                   \
  } while (0)
