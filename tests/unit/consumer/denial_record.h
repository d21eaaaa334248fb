// SPDX-License-Identifier: Apache-2.0
// One denial record for the consumer's unit tests: op, rule, path.
#pragma once

#include <string>
#include <utility>

#include "dsh/sandbox/denial.h"

namespace dsh::sandbox::consumer {

inline Denial record(std::string op, std::string rule, std::string path) {
  Denial denial;
  denial.op = std::move(op);
  denial.rule = std::move(rule);
  denial.path = std::move(path);
  return denial;
}

}  // namespace dsh::sandbox::consumer
