#include "xrc/unix_socket_stream.hpp"

#include <fcntl.h>
#include <kj/debug.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace xrc {

namespace {

constexpr size_t kMaxFdsPerRead = 256;  // as many as either end accepts in one message

kj::Exception socketError(const char* what, int error) {
  const bool gone = error == EPIPE || error == ECONNRESET || error == ENOTCONN;
  return kj::Exception(gone ? kj::Exception::Type::DISCONNECTED : kj::Exception::Type::FAILED, __FILE__, __LINE__,
                       kj::str(what, ": ", std::strerror(error)));
}

}  // namespace

UnixSocketStream::UnixSocketStream(kj::UnixEventPort& eventPort, UniqueFd fd)
    : eventPort_(eventPort),
      fd_(std::move(fd)),
      readObserver_(eventPort, fd_.get(), kj::UnixEventPort::FdObserver::OBSERVE_READ) {
  ::fcntl(fd_.get(), F_SETFL, ::fcntl(fd_.get(), F_GETFL) | O_NONBLOCK);
}

UnixSocketStream::~UnixSocketStream() noexcept(false) {}

kj::Promise<size_t> UnixSocketStream::tryRead(void* buffer, size_t minBytes, size_t maxBytes) {
  return tryReadWithFds(buffer, minBytes, maxBytes, nullptr, 0).then([](ReadResult r) { return r.byteCount; });
}

kj::Promise<UnixSocketStream::ReadResult> UnixSocketStream::tryReadWithFds(void* buffer, size_t minBytes,
                                                                           size_t maxBytes, kj::AutoCloseFd* fdBuffer,
                                                                           size_t maxFds) {
  return readMore(static_cast<kj::byte*>(buffer), minBytes, maxBytes, fdBuffer, maxFds, ReadResult{0, 0});
}

kj::Promise<UnixSocketStream::ReadResult> UnixSocketStream::readMore(kj::byte* buffer, size_t minBytes, size_t maxBytes,
                                                                     kj::AutoCloseFd* fdBuffer, size_t maxFds,
                                                                     ReadResult done) {
  for (;;) {
    iovec iov{buffer + done.byteCount, maxBytes - done.byteCount};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerRead)];
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t got = ::recvmsg(fd_.get(), &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return readObserver_.whenBecomesReadable().then([this, buffer, minBytes, maxBytes, fdBuffer, maxFds, done] {
          return readMore(buffer, minBytes, maxBytes, fdBuffer, maxFds, done);
        });
      }
      return socketError("recvmsg", errno);
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        if (done.capCount < maxFds) {
          fdBuffer[done.capCount++] = kj::AutoCloseFd(received);
        } else {
          ::close(received);  // no room asked for: not ours to keep
        }
      }
    }
    if (got == 0) return done;  // end of stream: a short read
    done.byteCount += size_t(got);
    if (done.byteCount >= minBytes) return done;
  }
}

kj::Promise<void> UnixSocketStream::write(const void* buffer, size_t size) {
  const kj::ArrayPtr<const kj::byte> piece = kj::arrayPtr(static_cast<const kj::byte*>(buffer), size);
  return sendFrom(kj::arrayPtr(&piece, 1), 0, nullptr);
}

kj::Promise<void> UnixSocketStream::write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) {
  return sendFrom(pieces, 0, nullptr);
}

kj::Promise<void> UnixSocketStream::writeWithFds(kj::ArrayPtr<const kj::byte> data,
                                                 kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> moreData,
                                                 kj::ArrayPtr<const int> fds) {
  std::vector<kj::ArrayPtr<const kj::byte>> pieces{data};
  pieces.insert(pieces.end(), moreData.begin(), moreData.end());
  return sendFrom(kj::arrayPtr(pieces.data(), pieces.size()), 0, fds);
}

kj::Promise<void> UnixSocketStream::sendFrom(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces, size_t skip,
                                             kj::ArrayPtr<const int> fds) {
  for (;;) {
    // What is left of the pieces, on the stack for the usual few (a flush is one): a write that
    // goes out at once allocates nothing.
    constexpr size_t kInlinePieces = 8;
    std::array<iovec, kInlinePieces> inlineIovs;
    std::vector<iovec> moreIovs;
    iovec* iovs = inlineIovs.data();
    if (pieces.size() > kInlinePieces) {
      moreIovs.resize(pieces.size());
      iovs = moreIovs.data();
    }
    size_t count = 0;
    size_t left = skip;
    for (const auto& piece : pieces) {
      if (left >= piece.size()) {
        left -= piece.size();
        continue;
      }
      iovs[count++] = iovec{const_cast<kj::byte*>(piece.begin()) + left, piece.size() - left};
      left = 0;
    }
    if (count == 0) return kj::READY_NOW;
    msghdr message{};
    message.msg_iov = iovs;
    message.msg_iovlen = count;
    std::vector<char> control;
    if (fds.size() > 0) {
      control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
      message.msg_control = control.data();
      message.msg_controllen = control.size();
      cmsghdr* c = CMSG_FIRSTHDR(&message);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.begin(), sizeof(int) * fds.size());
    }
    const ssize_t sent = ::sendmsg(fd_.get(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return socketError("sendmsg", errno);
      // No room: watch a duplicate of the socket for writability until this write has gone
      // out (the socket's own fd stays registered for reading only).
      if (writeObserver_.get() == nullptr) {
        writeWatchFd_ = UniqueFd(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
        if (!writeWatchFd_.valid()) return socketError("dup", errno);
        writeObserver_ = kj::heap<kj::UnixEventPort::FdObserver>(eventPort_, writeWatchFd_.get(),
                                                                 kj::UnixEventPort::FdObserver::OBSERVE_WRITE);
      }
      // The list of pieces is the caller's only until this returns: the rest of the write keeps
      // a copy (the bytes themselves stay the caller's until the write is done).
      auto owned = kj::heapArray<kj::ArrayPtr<const kj::byte>>(pieces);
      const auto rest = owned.asPtr().asConst();
      return writeObserver_->whenBecomesWritable()
          .then([this, rest, skip, fds]() { return sendFrom(rest, skip, fds); })
          .attach(kj::mv(owned));
    }
    fds = nullptr;  // they went with the first byte
    skip += size_t(sent);
    size_t total = 0;
    for (const auto& piece : pieces) total += piece.size();
    if (skip >= total) {
      writeObserver_ = nullptr;  // everything is out: stop watching for room
      writeWatchFd_.reset();
      return kj::READY_NOW;
    }
  }
}

kj::Promise<void> UnixSocketStream::whenWriteDisconnected() { return readObserver_.whenWriteDisconnected(); }

void UnixSocketStream::shutdownWrite() { ::shutdown(fd_.get(), SHUT_WR); }

void UnixSocketStream::abortRead() { ::shutdown(fd_.get(), SHUT_RD); }

kj::Promise<void> UnixSocketStream::writeWithStreams(kj::ArrayPtr<const kj::byte>,
                                                     kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>>,
                                                     kj::Array<kj::Own<kj::AsyncCapabilityStream>>) {
  return KJ_EXCEPTION(UNIMPLEMENTED, "xr-compositor passes fds, not streams");
}

kj::Promise<UnixSocketStream::ReadResult> UnixSocketStream::tryReadWithStreams(void*, size_t, size_t,
                                                                               kj::Own<kj::AsyncCapabilityStream>*,
                                                                               size_t) {
  return KJ_EXCEPTION(UNIMPLEMENTED, "xr-compositor passes fds, not streams");
}

}  // namespace xrc
