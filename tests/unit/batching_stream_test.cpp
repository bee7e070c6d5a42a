#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <kj/io.h>

#include "xrc/batching_stream.hpp"

namespace xrc {
namespace {

kj::ArrayPtr<const kj::byte> bytes(const char* text) {
  return kj::arrayPtr(reinterpret_cast<const kj::byte*>(text), std::strlen(text));
}

std::string readExactly(kj::AsyncInputStream& in, size_t n, kj::WaitScope& ws) {
  std::string out(n, '\0');
  const size_t got = in.tryRead(out.data(), n, n).wait(ws);
  out.resize(got);
  return out;
}

struct Pipe {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  kj::CapabilityPipe pipe = io.provider->newCapabilityPipe();
};

TEST(BatchingStream, WritesOfOneLoopPassShareOneSocketWriteInOrder) {
  Pipe p;
  BatchingStream writer(kj::mv(p.pipe.ends[0]), BatchingStream::Reads::passThrough);
  // Returned promises are ready at once: the bytes are copied into the queue.
  writer.write("ab", 2).wait(p.io.waitScope);
  writer.write("cd", 2).wait(p.io.waitScope);
  kj::ArrayPtr<const kj::byte> pieces[] = {bytes("ef"), bytes("g")};
  writer.write(kj::arrayPtr(pieces, 2)).wait(p.io.waitScope);
  EXPECT_EQ(writer.socketWrites(), 0u);
  EXPECT_EQ(readExactly(*p.pipe.ends[1], 7, p.io.waitScope), "abcdefg");
  EXPECT_EQ(writer.socketWrites(), 1u);
}

TEST(BatchingStream, WritesQueuedBehindALargeWriteStillGoingOutFollowItThenReuseItsBuffer) {
  Pipe p;
  BatchingStream writer(kj::mv(p.pipe.ends[0]), BatchingStream::Reads::passThrough);
  std::string large(4 << 20, '\0');  // more than the socket takes at once
  for (size_t i = 0; i < large.size(); ++i) large[i] = char('a' + (i * 7 + i / 4096) % 26);
  writer.write(large.data(), large.size()).wait(p.io.waitScope);
  p.io.waitScope.poll();  // the flush runs: its write waits for room
  EXPECT_EQ(writer.socketWrites(), 1u);
  writer.write("12", 2).wait(p.io.waitScope);  // queued meanwhile
  writer.write("34", 2).wait(p.io.waitScope);
  EXPECT_EQ(readExactly(*p.pipe.ends[1], large.size() + 4, p.io.waitScope), large + "1234");
  EXPECT_EQ(writer.socketWrites(), 2u);
  // The flushes after it go out of the buffers the earlier ones used, the bytes unchanged.
  for (const char* text : {"xy", "zzz", "w"}) {
    writer.write(text, std::strlen(text)).wait(p.io.waitScope);
    EXPECT_EQ(readExactly(*p.pipe.ends[1], std::strlen(text), p.io.waitScope), text);
  }
  EXPECT_EQ(writer.socketWrites(), 5u);
}

TEST(BatchingStream, FdsStayWithTheirBytesAndAfterEarlierWrites) {
  Pipe p;
  BatchingStream writer(kj::mv(p.pipe.ends[0]), BatchingStream::Reads::passThrough);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  kj::AutoCloseFd readEnd(fds[0]), writeEnd(fds[1]);
  writer.write("x", 1).wait(p.io.waitScope);
  const int sent[] = {readEnd.get()};
  // "x" is still queued when the fd write comes: it must reach the socket first. Like capnp, the
  // test issues the next write only once the fd write's promise resolved.
  writer.writeWithFds(bytes("y"), nullptr, kj::arrayPtr(sent, 1)).wait(p.io.waitScope);
  writer.write("z", 1).wait(p.io.waitScope);

  char buffer[3] = {};
  kj::AutoCloseFd received[2];
  size_t total = 0, fdCount = 0;
  while (total < 3) {
    auto r = p.pipe.ends[1]
                 ->tryReadWithFds(buffer + total, 1, 3 - total, received + fdCount, 2 - fdCount)
                 .wait(p.io.waitScope);
    ASSERT_GT(r.byteCount, 0u);
    if (r.capCount > 0) {
      // The kernel may merge earlier bytes into this read, but never deliver the fd before 'y'.
      EXPECT_NE(std::string(buffer + total, r.byteCount).find('y'), std::string::npos);
    }
    total += r.byteCount;
    fdCount += r.capCount;
  }
  EXPECT_EQ(std::string(buffer, 3), "xyz");
  ASSERT_EQ(fdCount, 1u);
  struct stat st {};
  EXPECT_EQ(::fstat(received[0].get(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(BatchingStream, ShutdownWriteDeliversQueuedBytesFirst) {
  Pipe p;
  BatchingStream writer(kj::mv(p.pipe.ends[0]), BatchingStream::Reads::passThrough);
  writer.write("abc", 3).wait(p.io.waitScope);
  writer.shutdownWrite();
  char buffer[8];
  EXPECT_EQ(p.pipe.ends[1]->tryRead(buffer, 8, 8).wait(p.io.waitScope), 3u);  // then end of stream
  EXPECT_EQ(std::string(buffer, 3), "abc");
}

TEST(BatchingStream, ReadAheadServesSeveralMessagesAndLargeOnes) {
  Pipe p;
  BatchingStream reader(kj::mv(p.pipe.ends[1]), BatchingStream::Reads::readAhead);
  std::string large(40000, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = char('a' + i % 26);
  const std::string burst = "hello" + std::string("world") + large + "tail";
  p.pipe.ends[0]->write(burst.data(), burst.size()).wait(p.io.waitScope);
  p.pipe.ends[0]->shutdownWrite();

  EXPECT_EQ(readExactly(reader, 5, p.io.waitScope), "hello");
  EXPECT_EQ(readExactly(reader, 5, p.io.waitScope), "world");
  EXPECT_EQ(readExactly(reader, large.size(), p.io.waitScope), large);
  // A read asking for more than is left gets what there is, then end of stream.
  char buffer[16];
  auto r = reader.tryReadWithFds(buffer, 16, 16, nullptr, 0).wait(p.io.waitScope);
  EXPECT_EQ(std::string(buffer, r.byteCount), "tail");
  EXPECT_EQ(r.capCount, 0u);
  EXPECT_EQ(reader.tryRead(buffer, 1, 16).wait(p.io.waitScope), 0u);
}

TEST(BatchingStream, ReadAheadDropsFdsAPeerAttaches) {
  Pipe p;
  BatchingStream reader(kj::mv(p.pipe.ends[1]), BatchingStream::Reads::readAhead);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  kj::AutoCloseFd readEnd(fds[0]), writeEnd(fds[1]);
  const int sent[] = {readEnd.get()};
  p.pipe.ends[0]->writeWithFds(bytes("m"), nullptr, kj::arrayPtr(sent, 1)).wait(p.io.waitScope);
  readEnd = nullptr;  // now the only read end is the one in flight
  char byte = 0;
  kj::AutoCloseFd received[1];
  auto r = reader.tryReadWithFds(&byte, 1, 1, received, 1).wait(p.io.waitScope);
  EXPECT_EQ(byte, 'm');
  EXPECT_EQ(r.capCount, 0u);
  // The kernel closed the dropped fd: the pipe has no reader left.
  ::signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(::write(writeEnd.get(), "q", 1), -1);
  EXPECT_EQ(errno, EPIPE);
}

}  // namespace
}  // namespace xrc
