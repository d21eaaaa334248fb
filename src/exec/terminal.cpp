// SPDX-License-Identifier: Apache-2.0
#include "exec/terminal.h"

#include <csignal>
#include <utility>

#include "dsh/sandbox/errors.h"
#include "exec/supervision.h"

namespace dsh::sandbox::exec {

using detail::Message;
using detail::MessageKind;

struct TerminalRun::State {
  Request request;  // argv and workdir, for a spawn failure's path
  detail::Supervision supervision;
  pid_t pid = 0;
  bool over_memory = false;
  std::optional<TerminalEnd> ended;

  // One message of the supervisor's, taken in.
  void take(const Message& message) {
    switch (message.kind) {
      case MessageKind::kStarted:
        pid = message.value;
        return;
      case MessageKind::kOverMemory:  // the kExited of the ended tree follows
        over_memory = true;
        return;
      case MessageKind::kSpawnFailed:
        ended = TerminalEnd{std::nullopt, detail::spawn_error_of(request, message), over_memory};
        return;
      case MessageKind::kExited:
        ended = TerminalEnd{message.value, std::nullopt, over_memory};
        return;
      case MessageKind::kLost:
        ended = TerminalEnd{std::nullopt, std::nullopt, over_memory};
        return;
    }
  }
};

TerminalRun::TerminalRun() = default;
TerminalRun::TerminalRun(std::unique_ptr<State> state) : state_(std::move(state)) {}
TerminalRun::TerminalRun(TerminalRun&&) noexcept = default;
TerminalRun& TerminalRun::operator=(TerminalRun&& other) noexcept {
  if (this != &other) {
    if (state_) end();
    state_ = std::move(other.state_);
  }
  return *this;
}
TerminalRun::~TerminalRun() {
  if (state_) end();
}

pid_t TerminalRun::pid() const { return state_ ? state_->pid : 0; }

int TerminalRun::watch_fd() const { return state_ ? state_->supervision.watch_fd() : -1; }

std::optional<TerminalEnd> TerminalRun::take_news() {
  if (!state_) return TerminalEnd{};
  if (!state_->ended) {
    if (const std::optional<Message> news = state_->supervision.read_news()) state_->take(*news);
  }
  return state_->ended;
}

TerminalEnd TerminalRun::wait() {
  std::optional<TerminalEnd> ended;
  while (!(ended = take_news())) {
  }
  return *ended;
}

void TerminalRun::signal(int signal) const {
  if (state_ && !state_->ended && signal > 0 && signal < NSIG) {
    state_->supervision.control_tree(static_cast<char>(signal));
  }
}

TerminalEnd TerminalRun::end() {
  if (!state_) return {};
  state_->supervision.let_go();
  return wait();  // what the supervisor said before it exited, then its end of the pipe
}

const BoundsFacts& TerminalRun::bounds() const {
  static const BoundsFacts none;
  return state_ ? state_->supervision.bounds->facts : none;
}

TerminalRun start_on_terminal(const TerminalRequest& request) {
  if (request.argv.empty() || !request.argv.front().starts_with('/')) {
    throw InvalidSandboxInputError("a terminal run's argv must start with an absolute program");
  }
  if (request.terminal < 0) {
    throw InvalidSandboxInputError("a terminal run needs the terminal's descriptor");
  }
  auto state = std::make_unique<TerminalRun::State>();
  state->request.argv = request.argv;
  state->request.workdir = request.workdir;
  state->request.fds = request.fds;
  state->request.bounds = request.bounds;
  validate(state->request, false).value();
  const int terminal = request.terminal;
  state->supervision.start(state->request, detail::ambient_environment(),
                           {terminal, terminal, terminal}, detail::SupervisorMode{true, true});
  if (state->supervision.setup_error) {
    state->ended = TerminalEnd{std::nullopt, state->supervision.setup_error, false};
  } else {
    // The first message, synchronously: started, or why not.
    state->take(*state->supervision.read_news());
  }
  return TerminalRun(std::move(state));
}

}  // namespace dsh::sandbox::exec
