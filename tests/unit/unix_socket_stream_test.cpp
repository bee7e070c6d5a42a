#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <kj/async-io.h>
#include <kj/debug.h>

#include "xrc/unix_socket_stream.hpp"

namespace xrc {
namespace {

struct Pair {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  UniqueFd a, b;
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    a = UniqueFd(fds[0]);
    b = UniqueFd(fds[1]);
  }
};

// The events this process's epoll instances watch `fd` for (from /proc/self/fdinfo), or nothing
// if no epoll instance watches it.
std::optional<uint32_t> epollEventsFor(int fd) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path(), ec).string() != "anon_inode:[eventpoll]") continue;
    std::ifstream info("/proc/self/fdinfo/" + entry.path().filename().string());
    for (std::string line; std::getline(info, line);) {
      int watched = -1;
      unsigned events = 0;
      if (std::sscanf(line.c_str(), "tfd: %d events: %x", &watched, &events) == 2 && watched == fd) return events;
    }
  }
  return std::nullopt;
}

TEST(UnixSocketStream, BytesAndFdsArriveTogether) {
  Pair p;
  const int readFd = p.b.get();
  UnixSocketStream writer(p.io.unixEventPort, std::move(p.a));
  UnixSocketStream reader(p.io.unixEventPort, std::move(p.b));
  UniqueFd first(::eventfd(0, EFD_CLOEXEC)), second(::eventfd(0, EFD_CLOEXEC));
  const int sent[] = {first.get(), second.get()};
  kj::ArrayPtr<const kj::byte> more[] = {kj::arrayPtr(reinterpret_cast<const kj::byte*>("world"), 5)};
  writer.writeWithFds(kj::arrayPtr(reinterpret_cast<const kj::byte*>("hello "), 6), more, sent).wait(p.io.waitScope);

  char buffer[11] = {};
  kj::AutoCloseFd received[4];
  auto result = reader.tryReadWithFds(buffer, 11, 11, received, 4).wait(p.io.waitScope);
  EXPECT_EQ(result.byteCount, 11u);
  ASSERT_EQ(result.capCount, 2u);
  EXPECT_EQ(std::string(buffer, 11), "hello world");
  // Each received fd is the same eventfd as the one sent: a count written to it is read back.
  uint64_t one = 1, back = 0;
  ASSERT_EQ(::write(received[0].get(), &one, sizeof(one)), ssize_t(sizeof(one)));
  ASSERT_EQ(::read(first.get(), &back, sizeof(back)), ssize_t(sizeof(back)));
  EXPECT_EQ(back, 1u);
  EXPECT_NE(received[1].get(), received[0].get());
  // The reading end is watched for reading only.
  auto events = epollEventsFor(readFd);
  ASSERT_TRUE(events.has_value());
  EXPECT_TRUE(*events & EPOLLIN);
  EXPECT_FALSE(*events & EPOLLOUT) << std::hex << *events;
}

// KJ's own socket stream watches for writability all along, which is what this stream avoids:
// proves that the check above can tell the two apart.
TEST(UnixSocketStream, KjsOwnStreamWatchesForWritabilityAllAlong) {
  Pair p;
  const int fd = p.a.get();
  auto kjStream = p.io.lowLevelProvider->wrapUnixSocketFd(p.a.release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP);
  auto events = epollEventsFor(fd);
  ASSERT_TRUE(events.has_value());
  EXPECT_TRUE(*events & EPOLLOUT) << std::hex << *events;
}

// A write larger than the socket buffer waits for room (watching a duplicate of the fd), then
// finishes; the bytes arrive complete and in order, and the watch ends with the write.
TEST(UnixSocketStream, WriteLargerThanTheSocketBufferWaitsForRoom) {
  Pair p;
  const int writeFd = p.a.get();
  UnixSocketStream writer(p.io.unixEventPort, std::move(p.a));
  UnixSocketStream reader(p.io.unixEventPort, std::move(p.b));
  std::vector<kj::byte> data(8 << 20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = kj::byte(i * 7 + i / 4096);
  auto written = writer.write(data.data(), data.size());
  std::vector<kj::byte> got(data.size());
  const size_t n = reader.tryRead(got.data(), got.size(), got.size()).wait(p.io.waitScope);
  written.wait(p.io.waitScope);
  EXPECT_EQ(n, data.size());
  EXPECT_TRUE(got == data);
  auto events = epollEventsFor(writeFd);
  ASSERT_TRUE(events.has_value());
  EXPECT_FALSE(*events & EPOLLOUT) << std::hex << *events;
}

TEST(UnixSocketStream, PeerGoneEndsReadsShortAndFailsWrites) {
  Pair p;
  UnixSocketStream stream(p.io.unixEventPort, std::move(p.a));
  ASSERT_EQ(::write(p.b.get(), "xy", 2), 2);
  p.b.reset();
  char buffer[8];
  EXPECT_EQ(stream.tryRead(buffer, 8, 8).wait(p.io.waitScope), 2u);  // what was there, then the end
  EXPECT_EQ(stream.tryRead(buffer, 1, 8).wait(p.io.waitScope), 0u);
  auto failure = kj::runCatchingExceptions([&] { stream.write("z", 1).wait(p.io.waitScope); });
  KJ_IF_MAYBE (e, failure) {
    EXPECT_EQ(e->getType(), kj::Exception::Type::DISCONNECTED) << e->getDescription().cStr();
  } else {
    ADD_FAILURE() << "a write to a closed peer succeeded";
  }
}

}  // namespace
}  // namespace xrc
