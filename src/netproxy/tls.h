// SPDX-License-Identifier: Apache-2.0
// The one piece of TLS the proxy reads: the server name a ClientHello asks for. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dsh::sandbox::netproxy {

enum class HelloState {
  kNotTls,     // the first byte is no TLS handshake record: another protocol, not checked
  kNeedMore,   // no byte yet, or a handshake whose first record has not fully arrived
  kNoSni,      // a ClientHello without a server_name extension
  kSni,        // a ClientHello naming `name`
  kMalformed,  // a handshake record that is not a well-formed ClientHello
};

struct Hello {
  HelloState state = HelloState::kNotTls;
  std::string name;
  std::size_t wanted = 0;  // kNeedMore: the bytes the first record needs in all
};

// Reads the ClientHello at the start of `bytes` (the client's first bytes after the tunnel
// opened). Only the first record is read: a hello split across records is kMalformed, refused.
Hello read_client_hello(std::string_view bytes);

}  // namespace dsh::sandbox::netproxy
