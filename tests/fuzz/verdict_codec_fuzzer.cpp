// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the verdict decoder: the CLI reads stored verdicts back from its cache, so
// the decoder must take any bytes without crashing, and whatever it accepts must be a verdict a
// probe on this host could have produced: a backend of the chain it was given, consistent
// Landlock features, the provider's own launcher, and a round trip through the encoder that
// gives the same selection back. Any violation aborts, which libFuzzer reports as a crash.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "local/verdict_codec.h"

namespace {

using dsh::sandbox::SandboxBackend;

void check(bool condition) {
  if (!condition) std::abort();
}

constexpr std::array kLinux = {SandboxBackend::kBwrap, SandboxBackend::kLandlock};
const std::string kLauncher = "/opt/dsh/bin/landlock-run";

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes as text
  const auto selection = dsh::sandbox::local::decode_selection(text, kLinux, kLauncher);
  if (!selection) return 0;
  check(selection->backend == SandboxBackend::kBwrap ||
        selection->backend == SandboxBackend::kLandlock);
  check(selection->backend != SandboxBackend::kLandlock || selection->landlock.has_value());
  if (selection->landlock) {
    const auto& features = *selection->landlock;
    check(features.abi >= 0 && features.abi <= 64);
    check(features.scope_ipc == (features.abi >= 6));
    check(features.deny_metadata == features.deny_network);
  }
  const std::string again = dsh::sandbox::local::encode_selection(*selection, kLauncher);
  check(dsh::sandbox::local::decode_selection(again, kLinux, kLauncher) == selection);
  return 0;
}
