// SPDX-License-Identifier: Apache-2.0
#include "exec/supervision.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/io.h"
#include "base/pipe.h"
#include "seam/call_scope.h"

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace dsh::sandbox::exec::detail {

namespace {

// The control channel: a socket pair, so that control_tree can send without SIGPIPE.
bool open_control(Pipe& control) {
  std::array<int, 2> fds{};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data()) != 0) return false;
  control.read.reset(fds[0]);
  control.write.reset(fds[1]);
  return true;
}

}  // namespace

std::vector<std::string> ambient_environment() {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    out.emplace_back(*entry);
  }
  return out;
}

Supervision::Supervision(Supervision&& other) noexcept
    : supervisor(std::exchange(other.supervisor, 0)),
      control(std::move(other.control)),
      status(std::move(other.status)),
      setup_error(std::move(other.setup_error)),
      bounds(std::move(other.bounds)) {}

void Supervision::start(const Request& request, std::vector<std::string> env,
                        const std::array<int, 3>& stdio, SupervisorMode mode) {
  Pipe control_pair;
  Pipe status_pipe;
  if (!open_control(control_pair) || !open_pipe(status_pipe)) {
    setup_error = SpawnError{SpawnStage::kSetup, errno, ""};
    return;
  }
  // What this call's checks kept is not kept past a command's start: it can change their files.
  CallScope::forget();
  make_tree_bounds(request.bounds, *bounds);
  SpawnPlan plan(request, std::move(env), stdio, control_pair.read.get(), status_pipe.write.get(),
                 *bounds);
  plan.parent_death_signal = mode.foreground;
  plan.new_session = mode.new_session;
  const pid_t pid = fork_supervisor(plan);
  if (pid < 0) {
    setup_error = SpawnError{SpawnStage::kSetup, -pid, ""};
    return;
  }
  supervisor = pid;
  control = std::move(control_pair.write);
  status = std::move(status_pipe.read);
}

std::optional<Message> Supervision::read_news() const {
  Message message;
  if (io::read_some(status.get(), &message, sizeof message) ==
      static_cast<ssize_t>(sizeof message)) {
    return message;
  }
  return Message{MessageKind::kLost};
}

// MSG_NOSIGNAL: a supervisor that exited before its last message was read makes this fail with
// EPIPE; a pipe would raise SIGPIPE in the caller instead, killing a caller without a handler
// (`dsh-sandbox probe`) whenever a deadline races the command's own exit.
void Supervision::control_tree(char command) const {
  while (::send(control.get(), &command, 1, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

void Supervision::let_go() {
  control.reset();
  if (supervisor > 0) {
    while (::waitpid(supervisor, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  supervisor = 0;
}

SpawnError spawn_error_of(const Request& request, const Message& message) {
  const auto stage = static_cast<SpawnStage>(message.stage);
  const std::string path = stage == SpawnStage::kProgram   ? request.argv[0]
                           : stage == SpawnStage::kWorkdir ? request.workdir
                                                           : std::string();
  return SpawnError{stage, message.value, path};
}

}  // namespace dsh::sandbox::exec::detail
