// SPDX-License-Identifier: Apache-2.0
// JSON a program printed, parsed for a test.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace dsh::testing {

// Parses `text`, failing the test (and returning null) when it is not JSON.
inline nlohmann::json parse_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    ADD_FAILURE() << "not JSON (" << error.what() << "): [" << text << "]";
    return nullptr;
  }
}

}  // namespace dsh::testing
