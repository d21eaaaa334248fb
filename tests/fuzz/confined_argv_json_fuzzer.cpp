// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the ConfinedArgv JSON decoder: a consumer reads confined argvs as JSON
// from another process or a file, so the decoder must take any bytes without crashing, refuse
// with a message, and whatever it accepts must survive encode then decode unchanged (and encode
// to the same text again). Any violation aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dsh/sandbox/json.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes as text
  const auto decoded = dsh::sandbox::confined_argv_from_json(text);
  if (!decoded) {
    check(!decoded.error().message.empty());
    return 0;
  }
  // Encoding fails only on text that is not UTF-8, which a JSON decoder never hands back.
  const auto encoded = dsh::sandbox::to_json(decoded.value());
  check(static_cast<bool>(encoded));
  const auto again = dsh::sandbox::confined_argv_from_json(encoded.value());
  check(again && again.value() == decoded.value());
  const auto encoded_again = dsh::sandbox::to_json(again.value());
  check(encoded_again && encoded_again.value() == encoded.value());
  return 0;
}
