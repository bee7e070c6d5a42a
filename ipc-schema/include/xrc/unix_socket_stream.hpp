// A Unix stream socket as a KJ capability stream that is woken only to read.
//
// KJ's own socket stream (0.9) registers its fd for readability *and* writability, edge
// triggered, for its whole life. A Unix socket reports "writable" again each time the peer reads
// what was written, so every answer the daemon sends woke it once more, when the client read it,
// for nothing (an `epoll_wait` that returns only EPOLLOUT; docs/BENCHMARKS.md, "Daemon CPU per
// client frame").
// This stream watches the fd for reading only; a write that does not fit in the socket buffer
// watches a duplicate of it for writability until it has gone out, then stops.
#pragma once

#include <kj/async-io.h>
#include <kj/async-unix.h>

#include <vector>

#include "xrc/unique_fd.hpp"

namespace xrc {

class UnixSocketStream final : public kj::AsyncCapabilityStream {
 public:
  // Takes `fd`, a connected SOCK_STREAM Unix socket; makes it non-blocking.
  UnixSocketStream(kj::UnixEventPort& eventPort, UniqueFd fd);
  ~UnixSocketStream() noexcept(false);

  // kj::AsyncInputStream
  kj::Promise<size_t> tryRead(void* buffer, size_t minBytes, size_t maxBytes) override;
  // kj::AsyncOutputStream
  kj::Promise<void> write(const void* buffer, size_t size) override;
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override;
  kj::Promise<void> whenWriteDisconnected() override;
  // kj::AsyncIoStream
  void shutdownWrite() override;
  void abortRead() override;
  kj::Maybe<int> getFd() const override { return fd_.get(); }
  // kj::AsyncCapabilityStream. Received fds are owned by `fdBuffer` (closed when it has no room).
  kj::Promise<void> writeWithFds(kj::ArrayPtr<const kj::byte> data,
                                 kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> moreData,
                                 kj::ArrayPtr<const int> fds) override;
  kj::Promise<ReadResult> tryReadWithFds(void* buffer, size_t minBytes, size_t maxBytes, kj::AutoCloseFd* fdBuffer,
                                         size_t maxFds) override;
  kj::Promise<void> writeWithStreams(kj::ArrayPtr<const kj::byte> data,
                                     kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> moreData,
                                     kj::Array<kj::Own<kj::AsyncCapabilityStream>> streams) override;
  kj::Promise<ReadResult> tryReadWithStreams(void* buffer, size_t minBytes, size_t maxBytes,
                                             kj::Own<kj::AsyncCapabilityStream>* streamBuffer,
                                             size_t maxStreams) override;

 private:
  kj::Promise<ReadResult> readMore(kj::byte* buffer, size_t minBytes, size_t maxBytes, kj::AutoCloseFd* fdBuffer,
                                   size_t maxFds, ReadResult done);
  // Sends `pieces` from `skip` bytes on; the fds go with the first byte sent. The list need only
  // live until this returns (what must wait keeps a copy); the bytes until the promise resolves.
  kj::Promise<void> sendFrom(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces, size_t skip,
                             kj::ArrayPtr<const int> fds);

  kj::UnixEventPort& eventPort_;
  UniqueFd fd_;
  kj::UnixEventPort::FdObserver readObserver_;
  UniqueFd writeWatchFd_;  // duplicate of fd_, watched only while a write waits for room
  kj::Own<kj::UnixEventPort::FdObserver> writeObserver_;
};

}  // namespace xrc
