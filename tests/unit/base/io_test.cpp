// SPDX-License-Identifier: Apache-2.0
// Whole reads and writes: everything arrives, a limit stops a read, failures keep their errno.
#include "base/io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>

#include "base/pipe.h"

namespace dsh::sandbox {
namespace {

// More than a pipe holds (64 KiB by default): the writer must loop over short writes while the
// reader drains.
TEST(Io, WriteAllAndReadAllMoveMoreThanAPipeHolds) {
  Pipe pipe;
  ASSERT_TRUE(open_pipe(pipe));
  const std::string sent(300'000, 'x');
  std::size_t written = 0;
  std::thread writer([&] {
    written = io::write_all(pipe.write.get(), sent);
    pipe.write.reset();
  });
  std::string got = "kept:";
  const io::ReadEnd end = io::read_all(pipe.read.get(), got);
  writer.join();
  EXPECT_EQ(written, sent.size());
  EXPECT_TRUE(end.ok());
  EXPECT_EQ(got, "kept:" + sent);
}

TEST(Io, ReadAllStopsBeforePassingItsLimit) {
  Pipe pipe;
  ASSERT_TRUE(open_pipe(pipe));
  ASSERT_EQ(io::write_all(pipe.write.get(), "0123456789"), 10U);
  pipe.write.reset();
  std::string got;
  const io::ReadEnd end = io::read_all(pipe.read.get(), got, 4);
  EXPECT_TRUE(end.over_limit);
  EXPECT_FALSE(end.ok());
  EXPECT_EQ(got, "");
}

TEST(Io, AnEmptyNonBlockingPipeEndsTheReadWithEagain) {
  Pipe pipe;
  ASSERT_TRUE(open_pipe(pipe));
  ASSERT_EQ(::fcntl(pipe.read.get(), F_SETFL, O_NONBLOCK), 0);
  ASSERT_EQ(io::write_all(pipe.write.get(), "ab"), 2U);
  std::string got;
  const io::ReadEnd end = io::read_all(pipe.read.get(), got);
  EXPECT_EQ(end.error, EAGAIN);
  EXPECT_EQ(got, "ab");
}

TEST(Io, WriteAllToAClosedDescriptorWritesNothingAndKeepsErrno) {
  errno = 0;
  EXPECT_EQ(io::write_all(-1, "abc"), 0U);
  EXPECT_EQ(errno, EBADF);
}

TEST(Io, PipeEndsAreCloseOnExec) {
  Pipe pipe;
  ASSERT_TRUE(open_pipe(pipe));
  EXPECT_NE(::fcntl(pipe.read.get(), F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_NE(::fcntl(pipe.write.get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(UniqueFd, ClosesOnResetAndHandsOverOnMove) {
  Pipe pipe;
  ASSERT_TRUE(open_pipe(pipe));
  const int fd = pipe.read.get();
  UniqueFd moved(std::move(pipe.read));
  EXPECT_EQ(pipe.read.get(), -1);  // NOLINT(bugprone-use-after-move): moved-from is defined
  EXPECT_EQ(moved.get(), fd);
  moved.reset();
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1);
}

}  // namespace
}  // namespace dsh::sandbox
