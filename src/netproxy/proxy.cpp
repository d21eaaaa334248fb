// SPDX-License-Identifier: Apache-2.0
// Standalone Asio (header-only) with C++20 coroutines: one single-threaded io_context per role.
#include "netproxy/proxy.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <asio.hpp>
#include <asio/experimental/awaitable_operators.hpp>

#include "base/io.h"
#include "netproxy/request.h"
#include "netproxy/rules.h"
#include "netproxy/tls.h"
#include "profiles/denial_line.h"

namespace dsh::sandbox::netproxy {

namespace {

using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
// A client stream: the TCP connection the bridge accepted inside the run's network namespace,
// handed over whole, so the proxy reads and writes the command's socket itself.
using Client = asio::generic::stream_protocol;
using namespace asio::experimental::awaitable_operators;

constexpr std::size_t kMaxHello = 16384 + 5 + 256;
constexpr std::size_t kBuffer = std::size_t{64} * 1024;
// A relay's pipe: 1 MiB is the most an unprivileged process may ask for by default
// (/proc/sys/fs/pipe-max-size); past the per-user total, pipes keep their default size.
constexpr std::size_t kPipeBytes = std::size_t{1024} * 1024;

void write_fd(int fd, std::string_view bytes) {
  while (!bytes.empty() && fd >= 0) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

struct Proxy {
  asio::io_context& io;
  Rules rules;
  int status_fd;

  void deny(std::string_view host, std::uint16_t port) const {
    deny_path(fmt::format("{}:{}", host, port));
  }
  // `path` as the client wrote it, when it is no destination at all (the encoder escapes it).
  void deny_path(const std::string& path, std::string detail = {}) const {
    Denial denial;
    denial.op = "connect";
    denial.rule = "network-not-allowed";
    denial.path = path;
    denial.detail = std::move(detail);
    write_fd(status_fd, profiles::encode_denial_line(denial));
  }
};

// A destination the lists admitted but none of whose addresses may be reached: the record names
// the first refused address (the entry learn mode proposes), the name, the range and the fix.
struct Refusal {
  std::string path;    // ADDRESS:PORT, or HOST:PORT when a deny entry refused the address
  std::string detail;  // for the record and the client's 403 body
};

std::string host_for_path(const Destination& destination) {
  if (destination.address && !destination.address->v4) return "[" + destination.host + "]";
  return destination.host;
}

// Reads into `pending` until it holds at least `count` bytes; false on end of stream.
template <class Stream>
awaitable<bool> fill(Stream& stream, std::string& pending, std::size_t count) {
  std::array<char, 4096> buffer{};
  while (pending.size() < count) {
    std::error_code error;
    const std::size_t n = co_await stream.async_read_some(
        asio::buffer(buffer), asio::redirect_error(use_awaitable, error));
    if (error || n == 0) co_return false;
    pending.append(buffer.data(), n);
  }
  co_return true;
}

// A pipe both directions of one relay can splice through: bytes move socket -> pipe -> socket
// inside the kernel (splice(2); Unix and TCP stream sockets both splice on Linux 6.5+), where a
// read and a write would copy each byte out to user space and back.
class SplicePipe {
 public:
  SplicePipe() {
    if (::pipe2(fds_.data(), O_CLOEXEC | O_NONBLOCK) != 0) fds_ = {-1, -1};
    // Best effort: a larger pipe moves more per call (F_SETPIPE_SZ, Linux 2.6.35).
    if (fds_[1] >= 0) (void)::fcntl(fds_[1], F_SETPIPE_SZ, static_cast<int>(kPipeBytes));
  }
  SplicePipe(const SplicePipe&) = delete;
  SplicePipe& operator=(const SplicePipe&) = delete;
  ~SplicePipe() {
    for (const int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  [[nodiscard]] bool valid() const { return fds_[0] >= 0; }
  [[nodiscard]] int read_end() const { return fds_[0]; }
  [[nodiscard]] int write_end() const { return fds_[1]; }

 private:
  std::array<int, 2> fds_{};
};

// Moves everything `from` sends to `to`, then ends `to`'s sending side. The kernel moves the
// bytes through a pipe; where no pipe can be had, they are copied through a buffer.
template <class From, class To>
awaitable<void> pump(From& from, To& to, std::string initial) {
  std::error_code error;
  if (!initial.empty()) {
    co_await asio::async_write(to, asio::buffer(initial),
                               asio::redirect_error(use_awaitable, error));
  }
  SplicePipe pipe;
  from.native_non_blocking(true, error);
  if (!error) to.native_non_blocking(true, error);
  if (!error && pipe.valid()) {
    constexpr unsigned kFlags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
    for (;;) {
      const ssize_t in =
          ::splice(from.native_handle(), nullptr, pipe.write_end(), nullptr, kPipeBytes, kFlags);
      if (in == 0) break;
      if (in < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) break;
        co_await from.async_wait(asio::socket_base::wait_read,
                                 asio::redirect_error(use_awaitable, error));
        if (error) break;
        continue;
      }
      auto left = static_cast<std::size_t>(in);
      while (left > 0 && !error) {
        const ssize_t out =
            ::splice(pipe.read_end(), nullptr, to.native_handle(), nullptr, left, kFlags);
        if (out > 0) {
          left -= static_cast<std::size_t>(out);
        } else if (out < 0 && errno == EINTR) {
          continue;
        } else if (out < 0 && errno == EAGAIN) {
          co_await to.async_wait(asio::socket_base::wait_write,
                                 asio::redirect_error(use_awaitable, error));
        } else {
          error = std::make_error_code(std::errc::broken_pipe);
        }
      }
      if (error) break;
    }
  } else {
    error.clear();
    std::vector<char> buffer(kBuffer);
    while (!error) {
      const std::size_t n = co_await from.async_read_some(
          asio::buffer(buffer), asio::redirect_error(use_awaitable, error));
      if (error) break;
      co_await asio::async_write(to, asio::buffer(buffer.data(), n),
                                 asio::redirect_error(use_awaitable, error));
    }
  }
  std::error_code ignored;
  to.shutdown(asio::socket_base::shutdown_send, ignored);
}

// The client's side of a tunnel: its first bytes, when they open a TLS handshake, must name the
// destination the tunnel was opened for (no domain fronting through an allowed tunnel).
awaitable<void> checked_pump(const Proxy& proxy, Client::socket& client, tcp::socket& upstream,
                             std::string pending, const Destination& destination) {
  for (;;) {
    const Hello hello = read_client_hello(pending);
    if (hello.state == HelloState::kNeedMore && hello.wanted <= kMaxHello) {
      if (co_await fill(client, pending, hello.wanted)) continue;
      break;
    }
    bool refuse = hello.state == HelloState::kMalformed || hello.state == HelloState::kNeedMore;
    std::string refused_host = host_for_path(destination);
    if (hello.state == HelloState::kSni) {
      auto named = canonical_destination(hello.name, destination.port);
      refuse = !named || named.value().host != destination.host;
      refused_host = named ? host_for_path(named.value()) : hello.name;
    }
    if (refuse) {
      proxy.deny(refused_host, destination.port);
      std::error_code ignored;
      client.close(ignored);
      upstream.close(ignored);
      co_return;
    }
    break;
  }
  co_await pump(client, upstream, std::move(pending));
}

std::string address_for_path(const IpAddress& address) {
  return address.v4 ? format_ip(address) : "[" + format_ip(address) + "]";
}

Refusal refusal_of(const Destination& destination, const IpAddress& address,
                   const AddressRefusal& why, Admission how) {
  const std::string where = host_for_path(destination);
  const std::string address_text = format_ip(address);
  std::string detail = destination.address ? fmt::format("{} is in {}", where, why.range)
                                           : fmt::format("{} resolves to {}, in {}",
                                                         destination.host, address_text, why.range);
  // A deny entry wins over every allow entry: there is no entry to propose, so the record keeps
  // the host (which learn finds already listed).
  if (why.entry.empty()) return {fmt::format("{}:{}", where, destination.port), std::move(detail)};
  detail += how == Admission::kWildcard ? ", which a wildcard entry never reaches"
                                        : ", which only an address entry reaches (not a name)";
  detail += fmt::format("; allow it with --network allow:{}", why.entry);
  return {fmt::format("{}:{}", address_for_path(address), destination.port), std::move(detail)};
}

asio::ip::address asio_address(const IpAddress& address) {
  asio::ip::address_v6::bytes_type bytes{};
  std::memcpy(bytes.data(), address.bytes.data(), 16);
  const asio::ip::address_v6 v6(bytes);
  return address.v4 ? asio::ip::address(asio::ip::make_address_v4(asio::ip::v4_mapped, v6))
                    : asio::ip::address(v6);
}

// The addresses to try for `destination`: its literal, its override, or what DNS answers.
awaitable<std::vector<IpAddress>> addresses_of(const Proxy& proxy, const Destination& destination) {
  if (destination.address) co_return std::vector<IpAddress>{*destination.address};
  if (const auto mapped = proxy.rules.override_for(destination.host)) {
    co_return std::vector<IpAddress>{*mapped};
  }
  std::vector<IpAddress> out;
  tcp::resolver resolver(proxy.io);
  std::error_code error;
  // The canonical name, exactly the string the lists were checked against.
  const auto results = co_await resolver.async_resolve(
      destination.host, std::to_string(destination.port), tcp::resolver::numeric_service,
      asio::redirect_error(use_awaitable, error));
  if (error) co_return out;
  for (const auto& entry : results) {
    const asio::ip::address ip = entry.endpoint().address();
    const auto address = parse_ip(ip.is_v4() ? ip.to_string() : ip.to_v6().to_string());
    if (address) out.push_back(*address);
  }
  co_return out;
}

// Resolves (or takes the literal or the override) and connects to the first admitted address.
// nullopt with `refused` set: no address may be reached.
awaitable<std::optional<tcp::socket>> dial(const Proxy& proxy, const Destination& destination,
                                           Admission how, std::optional<Refusal>& refused) {
  refused.reset();
  std::vector<tcp::endpoint> candidates;
  const std::vector<IpAddress> addresses = co_await addresses_of(proxy, destination);
  for (const IpAddress& address : addresses) {
    if (auto why = proxy.rules.address_refusal(address, destination.port, how)) {
      if (!refused) refused = refusal_of(destination, address, *why, how);
    } else {
      candidates.emplace_back(asio_address(address), destination.port);
    }
  }
  if (candidates.empty()) co_return std::nullopt;
  refused.reset();
  for (const tcp::endpoint& endpoint : candidates) {
    tcp::socket socket(proxy.io);
    std::error_code error;
    co_await socket.async_connect(endpoint, asio::redirect_error(use_awaitable, error));
    if (!error) {
      socket.set_option(tcp::no_delay(true), error);
      co_return socket;
    }
  }
  co_return std::nullopt;
}

awaitable<void> reply(Client::socket& client, std::string text) {
  std::error_code ignored;
  co_await asio::async_write(client, asio::buffer(text),
                             asio::redirect_error(use_awaitable, ignored));
  client.shutdown(asio::socket_base::shutdown_send, ignored);
}

std::string refusal_body(const Destination& destination) {
  return fmt::format("dsh-sandbox: {}:{} is not on this sandbox's network allow-list\n",
                     host_for_path(destination), destination.port);
}

// Reads until `parse` has what it needs of `pending`; nullopt: the stream ended first.
template <class Parse>
awaitable<std::optional<std::invoke_result_t<Parse, std::string_view>>> read_parsed(
    Client::socket& client, std::string& pending, Parse parse) {
  for (;;) {
    auto parsed = parse(pending);
    if (parsed.state != ParseState::kNeedMore) co_return parsed;
    if (!co_await fill(client, pending, parsed.wanted)) co_return std::nullopt;
  }
}

awaitable<void> serve_http(const Proxy& proxy, Client::socket client, std::string pending) {
  const auto parsed = co_await read_parsed(client, pending, parse_http_head);
  if (!parsed) {
    co_return co_await reply(client, http_error(431, "Request Header Fields Too Large", ""));
  }
  if (parsed->state == ParseState::kRefused) {
    co_return co_await reply(client, http_error(parsed->status, parsed->reason, parsed->body));
  }
  const HttpRequest& request = parsed->request;
  std::string body = pending.substr(request.head_size);
  const bool connect = request.connect;
  const std::string_view authority = request.authority;
  auto destination =
      parse_authority(authority, connect ? std::nullopt : std::optional<std::uint16_t>(80));
  if (!destination) {
    proxy.deny_path(std::string(authority));
    co_return co_await reply(client,
                             http_error(403, "Forbidden", destination.error().message + "\n"));
  }
  const Destination& where = destination.value();
  const Admission how = proxy.rules.admission(where);
  if (how == Admission::kRefused) {
    proxy.deny(host_for_path(where), where.port);
    co_return co_await reply(client, http_error(403, "Forbidden", refusal_body(where)));
  }
  std::optional<Refusal> refused;
  auto upstream = co_await dial(proxy, where, how, refused);
  if (!upstream) {
    if (refused) {
      proxy.deny_path(refused->path, refused->detail);
      co_return co_await reply(
          client, http_error(403, "Forbidden", "dsh-sandbox: " + refused->detail + "\n"));
    }
    co_return co_await reply(client, http_error(502, "Bad Gateway", "cannot reach upstream\n"));
  }
  if (connect) {
    std::error_code error;
    const std::string_view established = "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await asio::async_write(client, asio::buffer(established),
                               asio::redirect_error(use_awaitable, error));
    if (error) co_return;
    co_await (pump(*upstream, client, {}) &&
              checked_pump(proxy, client, *upstream, std::move(body), where));
    co_return;
  }
  const std::string host_header = where.port == 80
                                      ? host_for_path(where)
                                      : fmt::format("{}:{}", host_for_path(where), where.port);
  std::string forward =
      origin_head(request.method, request.path, request.version, host_header, request.header_lines);
  forward += body;
  co_await (pump(*upstream, client, {}) && pump(client, *upstream, std::move(forward)));
}

awaitable<void> serve_socks(const Proxy& proxy, Client::socket client, std::string pending) {
  // RFC 1928: greeting, then one CONNECT request; no authentication.
  const auto greeting = co_await read_parsed(client, pending, parse_socks_greeting);
  if (!greeting) co_return;
  const bool no_auth = greeting->no_auth;
  std::error_code error;
  const std::array<char, 2> choice = {5, no_auth ? '\0' : static_cast<char>(0xff)};
  co_await asio::async_write(client, asio::buffer(choice),
                             asio::redirect_error(use_awaitable, error));
  if (error || !no_auth) co_return;
  pending.erase(0, greeting->size);
  const auto answer = [&client](std::uint8_t code) -> awaitable<void> {
    const std::array<char, 10> bytes = {5, static_cast<char>(code), 0, 1, 0, 0, 0, 0, 0, 0};
    std::error_code ignored;
    co_await asio::async_write(client, asio::buffer(bytes),
                               asio::redirect_error(use_awaitable, ignored));
  };
  const auto request = co_await read_parsed(client, pending, parse_socks_request);
  if (!request) co_return;
  if (request->state == ParseState::kRefused) {
    co_return co_await answer(request->reply);
  }
  const std::string& host = request->host;
  const std::uint16_t port = request->port;
  std::string rest = pending.substr(request->size);
  auto destination = canonical_destination(host, port);
  const Admission how =
      destination ? proxy.rules.admission(destination.value()) : Admission::kRefused;
  if (how == Admission::kRefused) {
    if (destination) {
      proxy.deny(host_for_path(destination.value()), port);
    } else {
      proxy.deny(host, port);
    }
    co_return co_await answer(0x02);  // connection not allowed by ruleset
  }
  std::optional<Refusal> refused;
  auto upstream = co_await dial(proxy, destination.value(), how, refused);
  if (!upstream) {
    if (refused) proxy.deny_path(refused->path, refused->detail);
    co_return co_await answer(refused ? 0x02 : 0x05);
  }
  co_await answer(0x00);
  co_await (pump(*upstream, client, {}) &&
            checked_pump(proxy, client, *upstream, std::move(rest), destination.value()));
}

awaitable<void> serve(const Proxy& proxy, Client::socket client) {
  std::string pending;
  if (!co_await fill(client, pending, 1)) co_return;
  if (pending[0] == 5) {
    co_await serve_socks(proxy, std::move(client), std::move(pending));
  } else {
    co_await serve_http(proxy, std::move(client), std::move(pending));
  }
}

// One byte carrying one descriptor (SCM_RIGHTS): the message the bridge sends each accepted
// stream in, and the proxy receives it from. Not copyable: `message` points into the object.
struct FdMessage {
  char byte = 0;
  iovec vector{&byte, 1};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> space{};
  msghdr message{};

  FdMessage() {
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = space.data();
    message.msg_controllen = space.size();
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

// The protocol of a handed-over descriptor when it is a connected TCP stream, the only kind the
// bridge sends; anything else (a file, a pipe, a datagram socket) is refused.
std::optional<Client> tcp_stream(int fd) {
  int type = 0;
  int domain = 0;
  int protocol = 0;
  socklen_t length = sizeof(int);
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM) {
    return std::nullopt;
  }
  length = sizeof(int);
  // SO_DOMAIN and SO_PROTOCOL: Linux 2.6.32.
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0 ||
      (domain != AF_INET && domain != AF_INET6)) {
    return std::nullopt;
  }
  length = sizeof(int);
  if (::getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &length) != 0 ||
      protocol != IPPROTO_TCP) {
    return std::nullopt;
  }
  return Client(domain, protocol);
}

// Each message on the control socket carries one descriptor: a connection the bridge accepted.
awaitable<void> accept_streams(const Proxy& proxy, asio::posix::stream_descriptor& control) {
  for (;;) {
    std::error_code error;
    co_await control.async_wait(asio::posix::descriptor_base::wait_read,
                                asio::redirect_error(use_awaitable, error));
    if (error) co_return;
    for (;;) {
      FdMessage fd_message;
      msghdr& message = fd_message.message;
      const ssize_t n =
          ::recvmsg(control.native_handle(), &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      if (n <= 0) co_return;  // the bridge is gone
      const cmsghdr* header = CMSG_FIRSTHDR(&message);
      if (header == nullptr || header->cmsg_type != SCM_RIGHTS) continue;
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(header), sizeof(fd));
      const std::optional<Client> protocol = tcp_stream(fd);
      Client::socket client(proxy.io);
      if (protocol) client.assign(*protocol, fd, error);
      if (!protocol || error) {
        ::close(fd);
        continue;
      }
      asio::co_spawn(proxy.io, serve(proxy, std::move(client)), asio::detached);
    }
  }
}

[[noreturn]] void exec_or_fail(int status_fd, const std::vector<std::string>& argv) {
  std::vector<char*> pointers;
  pointers.reserve(argv.size() + 1);
  for (const std::string& arg : argv) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  ::execvp(pointers[0], pointers.data());
  fail(status_fd,
       fmt::format("exec failed: {}: {}", argv[0], std::generic_category().message(errno)));
}

// Forks the proxy's child with the control socket's other end on kControlFd, and execs argv in
// it with the signal mask as it was before the proxy blocked its own.
pid_t start_child(int status_fd, const std::vector<std::string>& argv, int control,
                  const sigset_t& old) {
  const pid_t child = ::fork();
  if (child < 0) fail(status_fd, fmt::format("fork: {}", std::generic_category().message(errno)));
  if (child == 0) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): this process runs one thread
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    // dup2 onto itself keeps close-on-exec, so the number is cleared explicitly either way.
    if ((control != kControlFd && ::dup2(control, kControlFd) < 0) ||
        ::fcntl(kControlFd, F_SETFD, 0) != 0) {
      fail(status_fd, "cannot place the control socket");
    }
    exec_or_fail(status_fd, argv);
  }
  return child;
}

// Serves the streams the bridge hands over on `control` until the child ends, passing the
// forwarded signals on to it; the child's raw wait status.
int serve_until_child_ends(const ProxyOptions& options, pid_t child, int control_fd,
                           const sigset_t& old) {
  asio::io_context io(1);
  Proxy proxy{io, Rules(options.list), options.status_fd};
  asio::posix::stream_descriptor control(io, control_fd);
  std::optional<int> status;
  asio::signal_set signals(io, SIGCHLD, SIGTERM, SIGINT);
  signals.add(SIGHUP);
  signals.add(SIGQUIT);
  std::function<void(const std::error_code&, int)> on_signal = [&](const std::error_code& error,
                                                                   int sig) {
    if (error) return;
    if (sig == SIGCHLD) {
      int raw = 0;
      if (::waitpid(child, &raw, WNOHANG) == child) {
        status = raw;
        io.stop();
        return;
      }
    } else {
      ::kill(child, sig);  // the command tree decides; we end with it
    }
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);
  // NOLINTNEXTLINE(concurrency-mt-unsafe): this process runs one thread
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  asio::co_spawn(io, accept_streams(proxy, control), asio::detached);
  // A child that ended before the handler was armed.
  if (int raw = 0; ::waitpid(child, &raw, WNOHANG) == child) status = raw;
  while (!status) {
    io.run();
    if (!status) io.restart();
  }
  return *status;
}

// Ends as the child did: its exit code, or its signal raised on ourselves.
[[noreturn]] void exit_as(int status) {
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  (void)::signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  // NOLINTNEXTLINE(concurrency-mt-unsafe): this process runs one thread
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  (void)::raise(sig);
  ::_exit(128 + sig);
}

void listen_on_loopback(tcp::acceptor& acceptor, int port) {
  try {
    const tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"),
                                 static_cast<std::uint16_t>(port));
    acceptor.open(endpoint.protocol());
    set_cloexec(acceptor.native_handle());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const std::system_error& error) {
    fail(-1, fmt::format("cannot listen on 127.0.0.1:{}: {}", port, error.what()));
  }
}

// The accepted connection itself travels to the proxy, which relays between it and the
// destination: one hop in user space's reach, not two.
void hand_over(int control, tcp::socket connection) {
  std::error_code error;
  connection.set_option(tcp::no_delay(true), error);
  FdMessage fd_message;
  msghdr& message = fd_message.message;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  const int fd = connection.native_handle();
  std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  // A full control socket holds the accept loop back rather than drop the connection.
  // Closing our copy afterwards leaves the proxy's the only one.
  while (::sendmsg(control, &message, MSG_NOSIGNAL) < 0) {
    if (errno == EINTR) continue;
    if (errno != EAGAIN) break;
    pollfd writable{control, POLLOUT, 0};
    (void)::poll(&writable, 1, -1);
  }
}

// The bridge's loop: every accepted connection handed over, until the proxy's end closes (it
// exited), which ends the bridge too, wherever it runs.
[[noreturn]] void serve_bridge(asio::io_context& io, tcp::acceptor& acceptor, int control) {
  asio::posix::stream_descriptor watch(io, ::dup(control));
  watch.async_wait(asio::posix::descriptor_base::wait_read, [&io, control](std::error_code) {
    char byte = 0;
    if (::recv(control, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) io.stop();
  });
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (;;) {
          std::error_code error;
          tcp::socket connection =
              co_await acceptor.async_accept(asio::redirect_error(use_awaitable, error));
          if (error) continue;
          hand_over(control, std::move(connection));
        }
      },
      asio::detached);
  io.run();
  ::_exit(0);
}

}  // namespace

void fail(int status_fd, const std::string& message) {
  std::string line = "dsh-netproxy: " + message;
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  line += '\n';
  write_fd(STDERR_FILENO, line);
  write_fd(status_fd, line);
  ::_exit(kProxyFailure);
}

void run_proxy(const ProxyOptions& options) {
  if (options.status_fd >= 0) {
    if (options.status_fd <= STDERR_FILENO ||
        ::fcntl(options.status_fd, F_SETFD, FD_CLOEXEC) != 0) {
      fail(-1, fmt::format("cannot use status fd {}", options.status_fd));
    }
  }
  const int status_fd = options.status_fd;
  if (options.argv.empty()) fail(status_fd, "usage error: missing `-- <argv>...` command");
  std::array<int, 2> pair = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair.data()) != 0) {
    fail(status_fd, fmt::format("socketpair: {}", std::generic_category().message(errno)));
  }
  // SIGCHLD is taken through asio's signal_set, which needs it blocked-free but handled; block
  // the forwarded signals until the loop listens, so none is lost between fork and run.
  sigset_t mask;
  sigemptyset(&mask);
  for (const int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&mask, sig);
  sigset_t old;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): this process runs one thread
  ::sigprocmask(SIG_BLOCK, &mask, &old);
  const pid_t child = start_child(status_fd, options.argv, pair[1], old);
  ::close(pair[1]);
  const int status = serve_until_child_ends(options, child, pair[0], old);
  exit_as(status);
}

void run_bridge(const BridgeOptions& options) {
  if (options.argv.empty()) fail(-1, "usage error: missing `-- <argv>...` command");
  if (::fcntl(options.control_fd, F_SETFD, FD_CLOEXEC) != 0) {
    fail(-1, fmt::format("no control socket on fd {}", options.control_fd));
  }
  asio::io_context io(1);
  tcp::acceptor acceptor(io);
  listen_on_loopback(acceptor, options.port);
  // The listener is ready before the command starts. The bridge runs in a grandchild, adopted
  // by bwrap's init: the command gets no unknown child, and the whole PID namespace (bridge
  // included) ends when the command does.
  io.notify_fork(asio::io_context::fork_prepare);
  const pid_t child = ::fork();
  if (child < 0) fail(-1, fmt::format("fork: {}", std::generic_category().message(errno)));
  if (child == 0) {
    if (::fork() != 0) ::_exit(0);
    io.notify_fork(asio::io_context::fork_child);
    ::setsid();
    serve_bridge(io, acceptor, options.control_fd);
  }
  io.notify_fork(asio::io_context::fork_parent);
  int raw = 0;
  while (::waitpid(child, &raw, 0) < 0 && errno == EINTR) {
  }
  ::close(options.control_fd);
  exec_or_fail(-1, options.argv);
}

}  // namespace dsh::sandbox::netproxy
