// SPDX-License-Identifier: Apache-2.0
#include "denial_record.h"

#include <stdio.h>
#include <string.h>

namespace landlock_run {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

// Appends `text` to out[*at..capacity), escaping when asked; false when it does not fit.
bool append(char* out, size_t capacity, size_t* at, const char* text, bool escape) {
  for (const char* p = text; *p != '\0'; ++p) {
    const unsigned char byte = static_cast<unsigned char>(*p);
    const bool special = escape && (byte <= 0x20 || byte >= 0x7f || byte == '%');
    const size_t need = special ? 3 : 1;
    if (*at + need >= capacity) return false;
    if (special) {
      out[(*at)++] = '%';
      out[(*at)++] = kHex[byte >> 4];
      out[(*at)++] = kHex[byte & 0xf];
    } else {
      out[(*at)++] = *p;
    }
  }
  return true;
}

}  // namespace

size_t format_denial_line(char* out, size_t capacity, const char* op, const char* rule, int pid,
                          const char* exe, const char* path) {
  char pid_text[16] = "-";
  if (pid > 0) snprintf(pid_text, sizeof(pid_text), "%d", pid);
  size_t at = 0;
  const bool ok =
      append(out, capacity, &at, "denial op=", false) && append(out, capacity, &at, op, false) &&
      append(out, capacity, &at, " rule=", false) && append(out, capacity, &at, rule, false) &&
      append(out, capacity, &at, " pid=", false) && append(out, capacity, &at, pid_text, false) &&
      append(out, capacity, &at, " exe=", false) && append(out, capacity, &at, exe, true) &&
      append(out, capacity, &at, " path=", false) && append(out, capacity, &at, path, true) &&
      append(out, capacity, &at, "\n", false);
  if (!ok) return 0;
  out[at] = '\0';
  return at;
}

size_t format_dropped_line(char* out, size_t capacity, uint64_t dropped) {
  const int n =
      snprintf(out, capacity, "denials-dropped %llu\n", static_cast<unsigned long long>(dropped));
  return n < 0 || static_cast<size_t>(n) >= capacity ? 0 : static_cast<size_t>(n);
}

}  // namespace landlock_run
