// SPDX-License-Identifier: Apache-2.0
#include "path_walk.h"

#include <string.h>

namespace landlock_run {

bool split_spelled(const char* path, SpelledPath* out) {
  size_t length = strlen(path);
  if (length == 0 || length >= kWalkPathMax) return false;
  out->trailing_slash = false;
  while (length > 1 && path[length - 1] == '/') {
    --length;
    out->trailing_slash = true;
  }
  size_t start = length;  // where the last component begins
  while (start > 0 && path[start - 1] != '/') --start;
  const size_t last_length = length - start;
  memcpy(out->last, path + start, last_length);
  out->last[last_length] = '\0';
  // The parent keeps its own slashes: "/" stays "/", "a//b" gives "a//".
  memcpy(out->parent, path, start);
  out->parent[start] = '\0';
  if (length == 1 && path[0] == '/') {
    strcpy(out->parent, "/");
    out->last[0] = '\0';
    out->trailing_slash = false;
  }
  out->plain = out->last[0] != '\0' && strcmp(out->last, ".") != 0 && strcmp(out->last, "..") != 0;
  return true;
}

bool next_component(const char** cursor, char* out, size_t capacity) {
  const char* p = *cursor;
  while (*p == '/') ++p;
  if (*p == '\0') {
    *cursor = p;
    return false;
  }
  const char* end = strchr(p, '/');
  const size_t length = end != nullptr ? static_cast<size_t>(end - p) : strlen(p);
  if (length >= capacity) return false;
  memcpy(out, p, length);
  out[length] = '\0';
  *cursor = p + length;
  return true;
}

bool splice_link(const char* target, const char* rest, char* out, size_t capacity) {
  const size_t target_length = strlen(target);
  const size_t rest_length = strlen(rest);
  const size_t need = target_length + (rest_length > 0 ? 1 + rest_length : 0);
  if (target_length == 0 || need >= capacity) return false;
  // `rest` may point into `out`: move it first.
  if (rest_length > 0) {
    memmove(out + target_length + 1, rest, rest_length);
    out[target_length] = '/';
  }
  memcpy(out, target, target_length);
  out[need] = '\0';
  return true;
}

}  // namespace landlock_run
