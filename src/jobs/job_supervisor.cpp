// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_supervisor.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "base/io.h"
#include "base/pipe.h"
#include "consumer/audit.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "exec/detached.h"

namespace dsh::sandbox::jobs {

namespace {

namespace status = consumer::status;
using consumer::Overloaded;

// How long job-kill waits for the supervisor after SIGTERM: exec's grace (SIGTERM to the
// command's group, SIGKILL to the tree 3 s later) plus the time to reap and record.
constexpr int kKillWaitMs = 15'000;

// The job supervisor's abort, reached from its signal handler (abort() is async-signal-safe).
std::shared_ptr<exec::AbortSignal>& job_abort() {
  static std::shared_ptr<exec::AbortSignal> abort;
  return abort;
}

void on_end_request(int /*signal*/) { job_abort()->abort(SIGTERM); }

// Why the session ended the job, once it did: set by the watch before it aborts the run, read
// after the run settled.
std::mutex& ended_by_lock() {
  static std::mutex lock;
  return lock;
}
std::optional<std::string>& ended_by() {
  static std::optional<std::string> reason;
  return reason;
}

void end_for_session(const std::string& reason) {
  {
    const std::lock_guard<std::mutex> held(ended_by_lock());
    if (!ended_by()) ended_by() = reason;
  }
  // No signal first and no grace: the session no longer allows what the tree may be doing.
  job_abort()->abort(0);
}

// Set by the deadline's thread before it aborts the run, read after the run settled.
std::atomic<bool>& deadline_passed() {
  static std::atomic<bool> passed{false};
  return passed;
}

// start --timeout: a thread sleeps until the deadline, then ends the tree as job-kill does
// (SIGTERM to the command's group, SIGKILL after the grace). The supervisor _exits once the job
// settles, so a thread still asleep then holds nothing.
void watch_deadline(const JobLaunch& launch) {
  if (!launch.deadline_ms) return;
  const auto deadline = std::chrono::milliseconds(static_cast<std::int64_t>(*launch.deadline_ms));
  std::thread([deadline] {
    std::this_thread::sleep_for(deadline);
    deadline_passed() = true;
    job_abort()->abort(SIGTERM);
  }).detach();
}

// The job runs as long as its session allows what it was started with: the watch's inotify
// descriptor wakes the thread at every change of the log, and a short poll backs it.
void watch_session(const JobLaunch& launch) {
  if (!launch.log) return;
  std::shared_ptr<policy::SessionWatch> watch;
  const SandboxMode running = launch.spec.policy.mode;
  try {
    const policy::SessionStart start =
        launch.session_start.value_or(policy::session_start(*launch.log, launch.spec.policy.mode));
    watch = std::make_shared<policy::SessionWatch>(*launch.log, running, start);
  } catch (const std::exception& error) {
    policy::SessionNews gone{policy::SessionNews::Kind::kUnreadable, running, error.what()};
    end_for_session(policy::session_news_text(gone, running, "job"));
    return;
  }
  std::thread([watch, running] {
    for (;;) {
      const policy::SessionNews news = watch->check();
      if (news.ends()) {
        end_for_session(policy::session_news_text(news, running, "job"));
        return;
      }
      pollfd ready{watch->fd(), POLLIN, 0};
      (void)::poll(&ready, 1, static_cast<int>(policy::SessionWatch::kPollInterval.count()));
    }
  }).detach();
}

// The live output files: what the command wrote, up to a tail's size each; the whole tail
// replaces them when the job ends.
class LiveFile {
 public:
  explicit LiveFile(UniqueFd fd) : fd_(std::move(fd)) {}
  void append(std::string_view chunk) {
    const std::size_t room =
        written_ < exec::kDefaultMaxOutputBytes ? exec::kDefaultMaxOutputBytes - written_ : 0;
    const std::string_view kept = chunk.substr(0, room);
    if (!kept.empty()) written_ += io::write_all(fd_.get(), kept);
  }

 private:
  UniqueFd fd_;
  std::size_t written_ = 0;
};

void send(int fd, std::string_view message) { (void)io::write_all(fd, message); }

void finish(const JobDirectory& dir, const JobView& view, const consumer::RunOutcome* outcome) {
  if (outcome != nullptr) {
    dir.write(kStdoutFile, outcome->out.tail);
    dir.write(kStderrFile, outcome->err.tail);
  }
  dir.write(kOutcomeFile, encode_outcome(view));  // last: its presence says the job ended
}

// The job's settlement line in its session's log, as `run` writes its own: sandbox/refused when
// the runner failed (the command did not run), else sandbox/run with the outcome. Best effort:
// a session that ended meanwhile (its log removed) takes nothing, and nothing else can be told.
void audit_settlement(const JobLaunch& launch, const JobView& view,
                      const consumer::RunOutcome* outcome, const std::string& refused) {
  if (!launch.log) return;
  try {
    if (view.runner_failed) {
      const auto mode = to_confined_mode(launch.spec.policy.mode);
      const std::string reason =
          !refused.empty() || !mode
              ? refused
              : SandboxUnavailableError(
                    *mode, outcome != nullptr
                               ? std::get<consumer::status::RunnerFailed>(outcome->status).detail
                               : std::string())
                    .what();
      SandboxRefusalEvent event{launch.spec.argv, launch.spec.policy.mode,
                                launch.spec.policy.workspace_root, "SANDBOX_UNAVAILABLE", reason};
      event.job = launch.handle;
      record_refusal(*launch.log, event);
      return;
    }
    if (outcome == nullptr) return;
    SandboxRunEvent event = consumer::run_event(launch.spec, *outcome);
    event.job = launch.handle;
    event.job_state = view.state == JobState::kCompleted ? "completed" : "killed";
    record_run(*launch.log, event);
  } catch (const std::exception&) {
    // The session's log is gone or refused: the job's own directory still has the outcome.
  }
}

// SIGTERM, SIGINT and SIGHUP end the job: each aborts the run, which ends its tree. SIGPIPE is
// ignored: a closed pipe is an error to report, not an end.
void handle_end_requests() {
  job_abort() = std::make_shared<exec::AbortSignal>();
  struct sigaction action {};
  action.sa_handler = on_end_request;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(signal, &action, nullptr);
  (void)::signal(SIGPIPE, SIG_IGN);
}

// The job's record (who runs what, since when) and its live output files, which the run's
// stdout and stderr stream into.
void open_job_files(const JobDirectory& dir, JobLaunch& launch) {
  JobRecord record;
  record.pid = ::getpid();
  record.start_time = process_start_time(record.pid);
  record.session = launch.session;
  record.mode = launch.spec.policy.mode;
  record.workspace = launch.spec.policy.workspace_root;
  record.argv = launch.spec.argv;
  record.started_at = ::time(nullptr);
  dir.write(kRecordFile, encode_record(record));
  auto out = std::make_shared<LiveFile>(dir.create_file(kStdoutFile));
  auto err = std::make_shared<LiveFile>(dir.create_file(kStderrFile));
  launch.spec.process.on_stdout = [out](std::string_view chunk) { out->append(chunk); };
  launch.spec.process.on_stderr = [err](std::string_view chunk) { err->append(chunk); };
}

// The job's outcome as recorded: what ended an aborted run, its session or its deadline, said.
JobView settled_view(const JobLaunch& launch, const consumer::RunOutcome& outcome) {
  JobView view = view_of(outcome);
  if (!std::holds_alternative<status::Aborted>(outcome.status)) return view;
  if (deadline_passed()) view.timed_out_ms = static_cast<long long>(*launch.deadline_ms);
  const std::lock_guard<std::mutex> held(ended_by_lock());
  view.ended_by = ended_by();
  return view;
}

// The job supervisor's whole life; never returns.
[[noreturn]] void supervise(int jobs_dir, const JobDirectory& dir,
                            consumer::SandboxBashExecutor& executor, JobLaunch launch,
                            UniqueFd handshake) {
  handle_end_requests();
  bool started = false;
  try {
    open_job_files(dir, launch);
    launch.spec.process.abort = job_abort();
    launch.spec.process.keep_spill = true;  // the lossy note names the full output
    launch.spec.process.stdin_fd = -1;
    launch.spec.process.timeout_ms.reset();
    watch_session(launch);
    std::optional<consumer::BackgroundJob> job;
    try {
      job.emplace(executor.start(launch.spec));
    } catch (const SandboxUnavailableError& error) {
      // The provider already confined this argv in the CLI: what fails here is the runner's
      // spawn, which the reference reports through job_output, not at once.
      JobView view;
      view.mode = launch.spec.policy.mode;
      view.state = JobState::kKilled;
      view.runner_failed = true;
      view.spawn_failed = error.detail().value_or(error.what());
      send(handshake.get(), "ok\n");
      started = true;
      handshake.reset();
      finish(dir, view, nullptr);
      audit_settlement(launch, view, nullptr, error.what());
      ::_exit(0);
    }
    send(handshake.get(), "ok\n");
    started = true;
    handshake.reset();
    watch_deadline(launch);
    const consumer::RunOutcome outcome = job->wait();
    const JobView view = settled_view(launch, outcome);
    finish(dir, view, &outcome);
    audit_settlement(launch, view, &outcome, "");
    ::_exit(0);
  } catch (const std::exception& error) {
    if (!started) {
      send(handshake.get(), fmt::format("error {}", error.what()));
      dir.remove(jobs_dir);
      ::_exit(1);
    }
    JobView view;
    view.mode = launch.spec.policy.mode;
    view.state = JobState::kKilled;
    view.spawn_failed = error.what();
    try {
      finish(dir, view, nullptr);
    } catch (const std::exception&) {
      // Nowhere left to report: job-output shows a supervisor gone without an outcome (killed).
    }
    ::_exit(1);
  }
}

}  // namespace

JobView view_of(const consumer::RunOutcome& outcome) {
  JobView view;
  view.mode = outcome.sandbox.mode;
  view.out = outcome.out.tail;
  view.err = outcome.err.tail;
  for (const exec::StreamOutput* stream : {&outcome.out, &outcome.err}) {
    if (!stream->truncated) continue;
    view.lossy = true;
    view.full_output.push_back(stream->spill_path.value_or(""));
  }
  std::visit(Overloaded{
                 [&view](const status::Exited& exited) {
                   view.state = JobState::kCompleted;
                   view.exit_code = exited.code;
                 },
                 [&view](const status::Signalled& signalled) {
                   view.state = JobState::kCompleted;
                   view.signal = signalled.signal;
                 },
                 [&view](const status::TimedOut&) { view.state = JobState::kKilled; },
                 [&view](const status::Aborted& aborted) {
                   view.state = JobState::kKilled;
                   view.signal = aborted.signal;  // what ended the command, when it was one
                 },
                 [&view](const status::NotStarted& not_started) {
                   view.state = JobState::kKilled;
                   view.spawn_failed = not_started.message();
                   view.spawn_errno = not_started.error;
                 },
                 [&view](const status::RunnerFailed& failed) {
                   // The runner reported its own failure: its own exit code, not the reserved
                   // 125 of a command that did not run (the flag says it did not).
                   view.state = JobState::kCompleted;
                   view.runner_failed = true;
                   view.exit_code = failed.exit_code.value_or(consumer::kNotRunExit);
                 },
             },
             outcome.status);
  view.denied = outcome.sandbox.denied && !view.runner_failed;
  view.git_undone = outcome.sandbox.git_undone;
  return view;
}

std::string launch_job(int jobs_dir, consumer::SandboxBashExecutor& executor, JobLaunch launch) {
  std::string handle = launch.handle.empty() ? new_handle() : launch.handle;
  launch.handle = handle;
  const JobDirectory dir = JobDirectory::create(jobs_dir, handle);
  Pipe handshake;
  if (!open_pipe(handshake)) {
    dir.remove(jobs_dir);
    throw std::runtime_error("cannot start the job: pipe2 failed");
  }
  // Detached (exec's detached mode): outside this call's session, no session leader, stdio on
  // /dev/null, only the job's directories and the handshake kept; the CLI call returns at once.
  const std::array<int, 3> keep = {jobs_dir, dir.fd(), handshake.write.get()};
  const int error = exec::start_detached(
      [&] { supervise(jobs_dir, dir, executor, std::move(launch), std::move(handshake.write)); },
      keep);
  handshake.write.reset();
  if (error != 0) {
    dir.remove(jobs_dir);
    throw std::runtime_error("cannot start the job: fork failed");
  }
  std::string reply;
  (void)io::read_all(handshake.read.get(), reply, 65536);
  if (reply == "ok\n") return handle;
  if (reply.starts_with("error ")) throw std::runtime_error(reply.substr(6));
  dir.remove(jobs_dir);
  throw std::runtime_error("the job supervisor ended before the job started");
}

namespace {

// A pidfd on the job's supervisor while the job runs; empty once it has ended (its outcome
// written, or its supervisor gone). Checked after the pidfd is open: if the start time matches
// then, the pidfd is the supervisor the record names, never a process that reused its pid.
UniqueFd running_supervisor(const JobDirectory& dir) {
  const auto text = dir.read(kRecordFile, kMaxRecordBytes);
  if (!text || dir.read(kOutcomeFile, kMaxRecordBytes)) return UniqueFd();
  const JobRecord record = decode_record(*text);
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, record.pid, 0)));
  if (pidfd.get() < 0 || process_start_time(record.pid) != record.start_time) return UniqueFd();
  return pidfd;
}

// Polls the pidfd until the process exits (true) or `wait_ms` passed (false); -1: no limit.
bool exited_within(int pidfd, int wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    int left = -1;
    if (wait_ms >= 0) {
      const auto rest = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      left = static_cast<int>(std::max<std::chrono::milliseconds::rep>(rest.count(), 0));
    }
    pollfd ready{pidfd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, left);
    if (polled < 0 && errno == EINTR) continue;
    return polled > 0 && (ready.revents & POLLIN) != 0;
  }
}

}  // namespace

bool kill_job(const JobDirectory& dir) {
  const UniqueFd pidfd = running_supervisor(dir);
  if (pidfd.get() < 0) return false;
  const auto signal_and_wait = [&pidfd](int signal, int wait_ms) {
    (void)::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0);
    return exited_within(pidfd.get(), wait_ms);
  };
  // SIGKILL only when it ignores the request: exec's supervisor then ends the tree on its own.
  if (!signal_and_wait(SIGTERM, kKillWaitMs)) signal_and_wait(SIGKILL, kKillWaitMs);
  return true;
}

bool wait_for_job(const JobDirectory& dir, int limit_ms) {
  const UniqueFd pidfd = running_supervisor(dir);
  // The supervisor writes the outcome before it exits: once it is gone, the job has ended.
  return pidfd.get() < 0 || exited_within(pidfd.get(), limit_ms);
}

}  // namespace dsh::sandbox::jobs
