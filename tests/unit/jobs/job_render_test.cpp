// SPDX-License-Identifier: Apache-2.0
// The job_output render of each outcome, byte for byte, from the RunOutcome a job settles with
// through the record its supervisor writes and job-output reads back.
#include "jobs/job_render.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>

#include "dsh/sandbox/errors.h"
#include "jobs/job_store.h"
#include "jobs/job_supervisor.h"

namespace dsh::sandbox::jobs {
namespace {

namespace status = consumer::status;

constexpr std::string_view kNonce = "0123456789abcdef";
constexpr std::string_view kRunnerFailed =
    "[sandbox: the sandbox runner itself failed under read-only mode \u2014 the command did not "
    "run; this is a sandbox problem, not a command failure]";
constexpr std::string_view kDenied = "[sandbox: file access denied under read-only mode]";

consumer::RunOutcome outcome(consumer::RunStatus run_status, std::string out = "",
                             std::string err = "") {
  consumer::RunOutcome result;
  result.status = std::move(run_status);
  result.out.tail = std::move(out);
  result.err.tail = std::move(err);
  result.sandbox.mode = SandboxMode::kReadOnly;
  return result;
}

// As job-output shows it: through the outcome record and back, the output from its files.
std::string render(const consumer::RunOutcome& settled, bool advertised = false) {
  const JobView written = view_of(settled);
  JobView read = decode_outcome(encode_outcome(written));
  read.out = written.out;
  read.err = written.err;
  return render_job_output(read, advertised, kNonce);
}

TEST(JobOutput, CompletedWithExitZero) {
  EXPECT_EQ(render(outcome(status::Exited{0}, "hi\n")),
            "<stdout 0123456789abcdef>\nhi\n</stdout 0123456789abcdef>\n"
            "[status: completed, exit code: 0]");
}

TEST(JobOutput, CompletedWithNonzeroExitAndNoOutput) {
  EXPECT_EQ(render(outcome(status::Exited{3})), "(no output)\n[status: completed, exit code: 3]");
}

TEST(JobOutput, SignalledIsCompletedWithTheSignal) {
  EXPECT_EQ(render(outcome(status::Signalled{SIGSEGV})),
            "(no output)\n[status: completed, killed by signal: SIGSEGV]");
}

TEST(JobOutput, DeniedCarriesTheDenialMarkerAndTheHintWhenAdvertised) {
  consumer::RunOutcome denied = outcome(status::Exited{1}, "", "touch: Permission denied\n");
  denied.sandbox.denied = true;
  const std::string fenced =
      "<stderr 0123456789abcdef>\ntouch: Permission denied\n</stderr 0123456789abcdef>\n";
  EXPECT_EQ(render(denied), fenced + std::string(kDenied) + "\n[status: completed, exit code: 1]");
  EXPECT_EQ(render(denied, true),
            fenced + std::string(kDenied) +
                "\n[sandbox: escalation available \u2014 retry this exact command once with "
                "sandbox_permissions (the narrowest wider mode that suffices) + justification; "
                "the approval prompt asks the user]\n[status: completed, exit code: 1]");
}

TEST(JobOutput, KilledOnRequestIsKilledBeforeExit) {
  EXPECT_EQ(render(outcome(status::Aborted{std::nullopt, SIGTERM}, "partial\n")),
            "<stdout 0123456789abcdef>\npartial\n</stdout 0123456789abcdef>\n"
            "[status: killed, killed before exit]");
}

TEST(JobOutput, SpawnFailedIsKilledWithTheSpawnErrorUnderStderr) {
  EXPECT_EQ(render(outcome(status::NotStarted{exec::SpawnStage::kProgram, ENOENT, "/no/prog"})),
            "<stderr 0123456789abcdef>\nspawn failed: spawn /no/prog ENOENT (No such file or "
            "directory)\n</stderr 0123456789abcdef>\n[status: killed, killed before exit]");
}

// The runner could not be spawned (the job supervisor records it so): the spawn-failed note, the
// runner-failed marker, killed; the denial marker is never shown with it.
TEST(JobOutput, RunnerSpawnFailureMatchesTheReferenceSnapshot) {
  JobView view;
  view.state = JobState::kKilled;
  view.runner_failed = true;
  view.denied = true;
  view.spawn_failed = "Error: spawn /ws/.dsh-missing-sandbox-runner ENOENT";
  EXPECT_EQ(render_job_output(decode_outcome(encode_outcome(view)), true, kNonce),
            "<stderr 0123456789abcdef>\nspawn failed: Error: spawn "
            "/ws/.dsh-missing-sandbox-runner ENOENT\n</stderr 0123456789abcdef>\n" +
                std::string(kRunnerFailed) + "\n[status: killed, killed before exit]");
}

TEST(JobOutput, RunnerFailureReplacesTheDenialMarker) {
  consumer::RunOutcome failed =
      outcome(status::RunnerFailed{"bwrap: setting up uid map: Permission denied"}, "",
              "bwrap: setting up uid map: Permission denied\n");
  failed.sandbox.denied = true;
  EXPECT_EQ(render(failed, true),
            "<stderr 0123456789abcdef>\nbwrap: setting up uid map: Permission denied\n"
            "</stderr 0123456789abcdef>\n" +
                std::string(kRunnerFailed) + "\n[status: completed, exit code: 125]");
}

TEST(JobOutput, LossyNamesTheFullOutputOrUnavailable) {
  consumer::RunOutcome lossy = outcome(status::Exited{0}, "tail\n", "etail\n");
  lossy.out.truncated = true;
  lossy.out.spill_path = "/var/tmp/dsh-sandbox-0/spill-out";
  lossy.err.truncated = true;
  EXPECT_EQ(render(lossy),
            "<stdout 0123456789abcdef>\ntail\n</stdout 0123456789abcdef>\n"
            "<stderr 0123456789abcdef>\netail\n</stderr 0123456789abcdef>\n"
            "[some output was dropped from memory; full output: "
            "/var/tmp/dsh-sandbox-0/spill-out, (unavailable)]\n"
            "[status: completed, exit code: 0]");
}

TEST(JobOutput, RunningJobSaysSo) {
  JobView view;
  view.out = "so far";
  EXPECT_EQ(render_job_output(view, false, kNonce),
            "<stdout 0123456789abcdef>\nso far\n</stdout 0123456789abcdef>\n[status: running]");
}

TEST(JobRecord, RoundTripsAndRefusesMalformed) {
  JobRecord record;
  record.pid = 4242;
  record.start_time = 99;
  record.session = "/home/me/s.jsonl";
  record.mode = SandboxMode::kWorkspaceWrite;
  record.workspace = "/home/me/ws";
  record.argv = {"bash", "-c", "make"};
  const JobRecord back = decode_record(encode_record(record));
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.start_time, 99U);
  EXPECT_EQ(back.session, record.session);
  EXPECT_EQ(back.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(back.argv, record.argv);
  EXPECT_THROW(decode_record("{}"), InvalidSandboxInputError);
  EXPECT_THROW(decode_outcome(R"({"version":1,"state":"running"})"), InvalidSandboxInputError);
}

TEST(JobHandle, OnlySixteenHexDigits) {
  EXPECT_TRUE(valid_handle(new_handle()));
  EXPECT_FALSE(valid_handle("../../etc/passwd"));
  EXPECT_FALSE(valid_handle("0123456789ABCDEF"));
  EXPECT_FALSE(valid_handle("0123456789abcde"));
}

}  // namespace
}  // namespace dsh::sandbox::jobs
