// SPDX-License-Identifier: Apache-2.0
// One output stream of a command: a bounded in-memory tail plus, once the tail overflows, a
// private spill file holding the full output up to a cap (spec §5.5 output caps).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "exec.h"

namespace dsh::sandbox::exec {

class StreamCapture {
 public:
  // `name` ("stdout", "stderr") prefixes the spill file; `spill_root` holds the private dir.
  StreamCapture(std::string_view name, std::size_t max_bytes, std::uint64_t max_spill_bytes,
                std::string spill_root);
  ~StreamCapture();
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;

  void append(std::string_view chunk);
  StreamOutput finish();  // call once, at the end

 private:
  void spill(std::string_view chunk);
  bool open_spill();

  std::string name_;
  std::size_t max_bytes_;
  std::uint64_t max_spill_bytes_;
  std::string spill_root_;
  std::string buffer_;  // grows to 2x max_bytes_ before trimming, so appends stay amortized O(1)
  std::uint64_t total_ = 0;
  std::uint64_t spilled_ = 0;
  int spill_fd_ = -1;
  bool spill_failed_ = false;
  std::string spill_path_;
};

// $TMPDIR when it is an absolute path, else /tmp.
std::string default_spill_root();

}  // namespace dsh::sandbox::exec
