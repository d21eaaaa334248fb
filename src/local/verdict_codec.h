// SPDX-License-Identifier: Apache-2.0
// A chain verdict as text, for a VerdictStore. Decoding is strict: anything unexpected is no
// verdict at all, and the provider probes again. A stored entry is trusted only as far as its
// place is (the store keeps it where no confined run can write), so the decoder also refuses
// what no probe on this host could have produced: a backend outside this platform's chain,
// Landlock features that contradict each other, a launcher other than the provider's own.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "profiles/profiles.h"

namespace dsh::sandbox::local {

// Larger entries are refused unread: an encoded verdict is under 300 bytes.
inline constexpr std::size_t kMaxVerdictBytes = 4096;

// `launcher`: the landlock-run the verdict's features were probed from (recorded when the
// selection uses Landlock).
std::string encode_selection(const profiles::Selection& selection, const std::string& launcher);

// nullopt unless `text` is a verdict encode_selection could have written on this host: its
// backend is one of `chain`, every field has its type and range, and a Landlock layer names
// `launcher`, the provider's own.
std::optional<profiles::Selection> decode_selection(const std::string& text,
                                                    std::span<const SandboxBackend> chain,
                                                    const std::string& launcher);

}  // namespace dsh::sandbox::local
