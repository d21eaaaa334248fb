// SPDX-License-Identifier: Apache-2.0
// The line every evidence producer writes on its status channel, one record per line:
//
//   denial op=OP rule=RULE pid=PID exe=EXE path=PATH [detail=DETAIL]
//   denials-dropped N
//
// OP and RULE are [a-z0-9-]+; PID is a decimal, or "-" when unknown; EXE, PATH and DETAIL are
// percent-encoded (every byte at or below 0x20, at or above 0x7f, and '%' itself, as %XX in upper
// case), so a path holding spaces, newlines or invalid UTF-8 survives in one line and no field can
// pose as another. "denials-dropped N" says a producer's own bound dropped N more records.
// Pure: no I/O. The launcher (which links no project code) writes the same bytes with its own
// C encoder; tests/unit/profiles checks that both agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dsh/sandbox/denial.h"

namespace dsh::sandbox::profiles {

std::string percent_encode(std::string_view bytes);
std::optional<std::string> percent_decode(std::string_view text);

// The record's line, with its trailing newline.
std::string encode_denial_line(const Denial& denial);
std::string encode_dropped_line(std::uint64_t dropped);

// One line, without its newline. nullopt for anything that is not exactly a record.
std::optional<Denial> decode_denial_line(std::string_view line);
// N of a "denials-dropped N" line; nullopt otherwise.
std::optional<std::uint64_t> decode_dropped_line(std::string_view line);

// Adds every record and dropped count found in `status` (a channel's whole text, other lines
// ignored) to `evidence`, keeping at most kMaxDenialRecords records; true when any was found.
bool collect_denials(std::string_view status, DenialEvidence& evidence);

// `status` without its record and dropped-count lines: what a producer said besides.
std::string without_denial_lines(std::string_view status);

}  // namespace dsh::sandbox::profiles
