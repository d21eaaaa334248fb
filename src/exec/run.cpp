// SPDX-License-Identifier: Apache-2.0
// The caller's side of a run: pipes, the supervisor fork, and one poll loop that streams
// output, enforces the deadline and abort, and collects the supervisor's status messages.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <memory>
#include <thread>
#include <utility>

#include "base/io.h"
#include "base/pipe.h"
#include "base/unique_fd.h"
#include "exec/bounds.h"
#include "exec/capture.h"
#include "exec/exec.h"
#include "exec/supervision.h"
#include "exec/supervisor.h"

namespace dsh::sandbox::exec {

namespace {

using Clock = std::chrono::steady_clock;
using detail::Message;
using detail::MessageKind;

// A started supervisor with the parent's ends of the command's output pipes.
struct Launch : detail::Supervision {
  UniqueFd out;
  UniqueFd err;
};

// `foreground`: the calling thread waits for the run, so the supervisor may take that thread's
// death as its caller's (PR_SET_PDEATHSIG fires when the forking thread exits).
Launch launch(const Request& request, bool foreground) {
  Launch launched;
  Pipe out;
  Pipe err;
  UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null_fd.get() < 0 || !open_pipe(out) || !open_pipe(err)) {
    launched.setup_error = SpawnError{SpawnStage::kSetup, errno, ""};
    return launched;
  }
  const int stdin_fd = request.stdin_fd >= 0 ? request.stdin_fd : null_fd.get();
  std::vector<std::string> env =
      request.inherit_env
          ? build_environment(detail::ambient_environment(), request.env, request.managed_env)
          : exact_environment(request.env, request.managed_env);
  launched.start(request, std::move(env), {stdin_fd, out.write.get(), err.write.get()},
                 detail::SupervisorMode{foreground, false});
  launched.out = std::move(out.read);
  launched.err = std::move(err.read);
  return launched;
}

bool read_message(int fd, Message& message) {
  return io::read_some(fd, &message, sizeof message) == static_cast<ssize_t>(sizeof message);
}

enum class Cause { kNone, kTimeout, kAbort };

// One run's poll loop. `deadline` is absent for background jobs; `abort_fds` are eventfds.
class Pump {
 public:
  Pump(const Request& request, Launch& launched)
      : request_(request), launched_(launched), out_("stdout", request), err_("stderr", request) {}

  void handle(const Message& message, Completion& result) {
    if (message.kind == MessageKind::kStarted) {
      pid_ = message.value;
      return;
    }
    if (message.kind == MessageKind::kOverMemory) {  // the kExited of the ended tree follows
      over_memory_ = true;
      return;
    }
    settled_ = true;
    if (message.kind == MessageKind::kLost) return;  // nothing more will come, nor any status
    if (message.kind == MessageKind::kSpawnFailed) {
      result.spawn_error = detail::spawn_error_of(request_, message);
    } else if (WIFEXITED(message.value)) {
      result.exit_code = WEXITSTATUS(message.value);
    } else if (WIFSIGNALED(message.value)) {
      result.signal = WTERMSIG(message.value);
    }
  }

  void run(std::optional<Clock::time_point> deadline, const std::vector<const AbortSignal*>& aborts,
           Completion& result) {
    const Clock::duration grace =
        std::chrono::microseconds(static_cast<std::int64_t>(request_.grace_ms * 1000));
    std::optional<Clock::time_point> kill_at;
    while (!settled_) {
      const auto now = Clock::now();
      if (cause_ == Cause::kNone && deadline && now >= *deadline) {
        escalate(Cause::kTimeout, SIGTERM);
      }
      if (cause_ != Cause::kNone && !kill_at) kill_at = now + grace;
      if (kill_at && now >= *kill_at && !killed_) {
        launched_.control_tree(detail::kKill);
        killed_ = true;
      }
      const auto wake = cause_ == Cause::kNone ? deadline : (killed_ ? std::nullopt : kill_at);
      poll_once(wake, cause_ == Cause::kNone ? aborts : std::vector<const AbortSignal*>{}, result);
    }
    drain(launched_.out, out_, request_.on_stdout);
    drain(launched_.err, err_, request_.on_stderr);
    result.timed_out = cause_ == Cause::kTimeout;
    result.aborted = cause_ == Cause::kAbort;
    result.out = out_.finish();
    result.err = err_.finish();
    result.bounds = launched_.bounds->facts;
    result.bounds.memory.exceeded = over_memory_;
  }

  pid_t pid() const { return pid_; }

 private:
  void escalate(Cause cause, int signal) {
    cause_ = cause;  // the first cause wins: timed_out and aborted never both hold
    launched_.control_tree(signal > 0 && signal < NSIG ? static_cast<char>(signal) : detail::kKill);
  }

  static int poll_timeout(std::optional<Clock::time_point> wake) {
    if (!wake) return -1;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - Clock::now()).count();
    return static_cast<int>(std::clamp<std::int64_t>(left, 0, 60'000));
  }

  void poll_once(std::optional<Clock::time_point> wake,
                 const std::vector<const AbortSignal*>& aborts, Completion& result) {
    std::vector<pollfd> fds = {{out_open_ ? launched_.out.get() : -1, POLLIN, 0},
                               {err_open_ ? launched_.err.get() : -1, POLLIN, 0},
                               {launched_.watch_fd(), POLLIN, 0}};
    for (const AbortSignal* abort : aborts) fds.push_back({abort->fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), poll_timeout(wake)) < 0) return;  // EINTR: go round
    if (fds[0].revents != 0) out_open_ = pump_open(launched_.out, out_, request_.on_stdout);
    if (fds[1].revents != 0) err_open_ = pump_open(launched_.err, err_, request_.on_stderr);
    if (fds[2].revents != 0) {
      if (const std::optional<Message> news = launched_.read_news()) handle(*news, result);
    }
    for (std::size_t i = 3; i < fds.size(); ++i) {
      if (fds[i].revents != 0 && cause_ == Cause::kNone) {
        escalate(Cause::kAbort, aborts[i - 3]->forwarded());
      }
    }
  }

  // Reads one chunk into the capture and the callback: the read's result (0 at EOF).
  ssize_t pump(const UniqueFd& fd, StreamCapture& capture, const OutputCallback& callback) {
    const ssize_t n = io::read_some(fd.get(), buffer_->data(), kReadChunk);
    if (n <= 0) return n;
    const std::string_view chunk(buffer_->data(), static_cast<std::size_t>(n));
    capture.append(chunk);
    if (callback) callback(chunk);
    return n;
  }

  // Returns false once the stream is at EOF or broken.
  bool pump_open(const UniqueFd& fd, StreamCapture& capture, const OutputCallback& callback) {
    const ssize_t n = pump(fd, capture, callback);
    return n > 0 || (n < 0 && errno == EAGAIN);
  }

  // After the supervisor reported, every process of the tree is dead and reaped, so the pipes
  // hold all there is; non-blocking, in case a descriptor was passed out of the tree (SCM_RIGHTS).
  void drain(const UniqueFd& fd, StreamCapture& capture, const OutputCallback& callback) {
    ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
    while (pump(fd, capture, callback) > 0) {
    }
  }

  const Request& request_;
  Launch& launched_;
  StreamCapture out_;
  StreamCapture err_;
  // Not zero-filled: clearing 64 KiB is a visible share of what a `dsh-sandbox run` executes.
  static constexpr std::size_t kReadChunk = std::size_t{64} * 1024;
  std::unique_ptr<std::array<char, kReadChunk>> buffer_ =
      std::make_unique_for_overwrite<std::array<char, kReadChunk>>();
  Cause cause_ = Cause::kNone;
  bool settled_ = false;
  bool killed_ = false;
  bool over_memory_ = false;
  bool out_open_ = true;
  bool err_open_ = true;
  pid_t pid_ = 0;
};

std::chrono::milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace

Completion run(const Request& request) {
  validate(request, true).value();
  Completion result;
  if (request.abort && request.abort->aborted()) {  // cancellation wins: nothing is spawned
    result.aborted = true;
    return result;
  }
  const auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (!request.no_deadline) {
    deadline = start + resolve_timeout(request.timeout_ms, request.max_timeout_ms).value();
  }
  Launch launched = launch(request, true);
  if (launched.setup_error) {
    result.spawn_error = launched.setup_error;
    return result;
  }
  std::vector<const AbortSignal*> aborts;
  if (request.abort) aborts.push_back(request.abort.get());
  Pump pump(request, launched);
  pump.run(deadline, aborts, result);
  result.duration = since(start);
  return result;
}

struct Job::State {
  explicit State(Request req) : request(std::move(req)), launched(launch(request, false)) {}

  Request request;  // the job's own copy: callbacks and limits outlive the caller's Request
  Launch launched;
  AbortSignal kill_signal;
  std::optional<Pump> pump;
  std::thread thread;
  Completion result;
  Clock::time_point start = Clock::now();
  pid_t pid = 0;
};

Job::Job() = default;
Job::Job(std::unique_ptr<State> state) : state_(std::move(state)) {}
Job::Job(Job&&) noexcept = default;
Job& Job::operator=(Job&& other) noexcept {
  if (this != &other) {
    if (state_ && state_->thread.joinable()) {
      kill();
      state_->thread.join();
    }
    state_ = std::move(other.state_);
  }
  return *this;
}
Job::~Job() {
  if (state_ && state_->thread.joinable()) {
    kill();
    state_->thread.join();
  }
}

pid_t Job::pid() const { return state_ ? state_->pid : 0; }

const std::optional<SpawnError>& Job::spawn_error() const {
  static const std::optional<SpawnError> none;
  return state_ ? state_->result.spawn_error : none;
}

void Job::kill() {
  if (state_) state_->kill_signal.abort();
}

Completion Job::wait() {
  if (!state_) return {};
  if (state_->thread.joinable()) state_->thread.join();
  return std::move(state_->result);
}

// The first message (started, or the reason it could not start) is read here, synchronously,
// so a spawn failure is known when start() returns; the rest is pumped on a thread.
Job start(const Request& request) {
  validate(request, false).value();
  auto state = std::make_unique<Job::State>(request);
  Job::State& job = *state;
  if (job.launched.setup_error) {
    job.result.spawn_error = job.launched.setup_error;
    return Job(std::move(state));
  }
  job.pump.emplace(job.request, job.launched);
  Message first;
  if (read_message(job.launched.status.get(), first)) job.pump->handle(first, job.result);
  job.pid = job.pump->pid();
  if (job.result.spawn_error) return Job(std::move(state));
  std::vector<const AbortSignal*> aborts = {&job.kill_signal};
  if (job.request.abort) aborts.push_back(job.request.abort.get());
  job.thread = std::thread([&job, aborts] {
    job.pump->run(std::nullopt, aborts, job.result);
    job.result.duration = since(job.start);
  });
  return Job(std::move(state));
}

}  // namespace dsh::sandbox::exec
