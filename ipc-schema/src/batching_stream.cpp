#include "xrc/batching_stream.hpp"

#include <kj/debug.h>

#include "xrc/monotonic_clock.hpp"

#include <algorithm>
#include <cstring>

namespace xrc {

namespace {
// Large enough for a burst of a frame's calls; a bigger message is read straight into its buffer.
constexpr size_t kReadAheadBytes = 16 * 1024;
// A write buffer grown past this by a large message is given up once written, not kept.
constexpr size_t kKeptWriteBufferBytes = 64 * 1024;
}  // namespace

BatchingStream::BatchingStream(kj::Own<kj::AsyncCapabilityStream> inner, Reads reads,
                               std::shared_ptr<std::atomic<uint64_t>> writeCounter)
    : inner_(kj::mv(inner)),
      reads_(reads),
      socketWrites_(writeCounter ? std::move(writeCounter) : std::make_shared<std::atomic<uint64_t>>(0)),
      readBuffer_(reads == Reads::readAhead ? kj::heapArray<kj::byte>(kReadAheadBytes) : nullptr),
      tasks_(*this) {}

BatchingStream::~BatchingStream() noexcept(false) {}

// --- writes ------------------------------------------------------------------------------------

void BatchingStream::append(kj::ArrayPtr<const kj::byte> bytes) {
  if (failure_ != nullptr) return;  // cut off: nothing more goes out
  queued_.addAll(bytes);
  if (unsentBytes() <= unsentLimit_) return;
  KJ_IF_MAYBE (exceeded, onUnsentExceeded_) {
    auto callback = kj::mv(*exceeded);
    onUnsentExceeded_ = nullptr;
    failure_ = KJ_EXCEPTION(DISCONNECTED, "the peer does not read its answers");
    queued_.clear();
    callback();
  }
}

void BatchingStream::limitUnsentBytes(size_t bytes, kj::Function<void()> onExceeded) {
  unsentLimit_ = bytes;
  onUnsentExceeded_ = kj::mv(onExceeded);
}

kj::Promise<void> BatchingStream::write(const void* buffer, size_t size) {
  KJ_IF_MAYBE (failure, failure_) {
    return kj::cp(*failure);
  }
  append(kj::arrayPtr(static_cast<const kj::byte*>(buffer), size));
  scheduleFlush();
  return kj::READY_NOW;
}

kj::Promise<void> BatchingStream::write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) {
  KJ_IF_MAYBE (failure, failure_) {
    return kj::cp(*failure);
  }
  for (auto piece : pieces) append(piece);
  scheduleFlush();
  // The bytes are copied, so the caller may reuse its buffers at once; ordering with later writes
  // is kept by the queue.
  return kj::READY_NOW;
}

kj::Promise<void> BatchingStream::writeWithFds(kj::ArrayPtr<const kj::byte> data,
                                               kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> moreData,
                                               kj::ArrayPtr<const int> fds) {
  if (fds.size() == 0) {
    KJ_IF_MAYBE (failure, failure_) {
      return kj::cp(*failure);
    }
    append(data);
    for (auto piece : moreData) append(piece);
    scheduleFlush();
    return kj::READY_NOW;
  }
  // Everything queued before goes first. The caller keeps `data` and `fds` alive, and sends
  // nothing else, until the returned promise resolves (capnp chains its writes).
  flushQueued();
  return whenIdle().then([this, data, moreData, fds]() {
    socketWrites_->fetch_add(1, std::memory_order_relaxed);
    return inner_->writeWithFds(data, moreData, fds);
  });
}

void BatchingStream::scheduleFlush() {
  if (flushScheduled_) return;
  flushScheduled_ = true;
  // evalLast runs after every event already queued, so all messages the RPC system sends in this
  // pass of the event loop end up in one socket write.
  tasks_.add(kj::evalLast([this] { flushQueued(); }));
}

void BatchingStream::flushQueued() {
  flushScheduled_ = false;
  if (queued_.empty() || writeInFlight_) return;  // an in-flight write flushes again when done
  // sending_ is empty here (the last write is done): the queue's bytes go out from it, and the
  // queue takes its capacity. tasks_, declared after both, is cancelled before they are freed.
  std::swap(queued_, sending_);
  writeInFlight_ = true;
  inFlightBytes_ = sending_.size();
  socketWrites_->fetch_add(1, std::memory_order_relaxed);
  // The syscall happens here, not on a later turn: RpcLink::flush() relies on it.
  auto written = inner_->write(sending_.begin(), sending_.size());
  tasks_.add(written.then(
      [this] {
        writeInFlight_ = false;
        inFlightBytes_ = 0;
        releaseSent();
        flushQueued();
        if (!writeInFlight_) wakeIdleWaiters();
      },
      [this](kj::Exception&& e) {
        writeInFlight_ = false;
        inFlightBytes_ = 0;
        releaseSent();
        if (failure_ == nullptr) failure_ = kj::cp(e);
        wakeIdleWaiters();
      }));
}

void BatchingStream::releaseSent() {
  if (sending_.capacity() > kKeptWriteBufferBytes) {
    sending_ = kj::Vector<kj::byte>();
  } else {
    sending_.clear();
  }
}

kj::Promise<void> BatchingStream::whenIdle() {
  if (!writeInFlight_) {
    KJ_IF_MAYBE (failure, failure_) {
      return kj::cp(*failure);
    }
    return kj::READY_NOW;
  }
  auto paf = kj::newPromiseAndFulfiller<void>();
  idleWaiters_.add(kj::mv(paf.fulfiller));
  return kj::mv(paf.promise);
}

void BatchingStream::wakeIdleWaiters() {
  auto waiters = kj::mv(idleWaiters_);
  for (auto& waiter : waiters) {
    KJ_IF_MAYBE (failure, failure_) {
      waiter->reject(kj::cp(*failure));
    } else {
      waiter->fulfill();
    }
  }
}

kj::Promise<void> BatchingStream::whenWriteDisconnected() { return inner_->whenWriteDisconnected(); }

void BatchingStream::shutdownWrite() {
  flushQueued();
  tasks_.add(whenIdle().then([this] { inner_->shutdownWrite(); }));
}

kj::Promise<void> BatchingStream::writeWithStreams(kj::ArrayPtr<const kj::byte>,
                                                   kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>>,
                                                   kj::Array<kj::Own<kj::AsyncCapabilityStream>>) {
  return KJ_EXCEPTION(UNIMPLEMENTED, "xr-compositor passes fds, not streams");
}

void BatchingStream::taskFailed(kj::Exception&& exception) {
  if (failure_ == nullptr) failure_ = kj::mv(exception);
}

// --- reads -------------------------------------------------------------------------------------

kj::Promise<size_t> BatchingStream::tryRead(void* buffer, size_t minBytes, size_t maxBytes) {
  if (reads_ == Reads::passThrough) return inner_->tryRead(buffer, minBytes, maxBytes);
  if (rateTimer_ != nullptr && !frames_.midMessage()) {
    // A new message is about to be read: within this window's share?
    const int64_t now = monotonicNowNs();
    if (now - rateWindowStartNs_ >= rateWindowNs_) {
      rateWindowStartNs_ = now;
      messagesAtWindowStart_ = frames_.messages();
      limitedThisWindow_ = false;
    }
    if (frames_.messages() - messagesAtWindowStart_ >= ratePerWindow_) {
      if (!limitedThisWindow_) {
        limitedThisWindow_ = true;
        onRateLimited_();
      }
      const int64_t waitNs = rateWindowStartNs_ + rateWindowNs_ - now;
      return rateTimer_->afterDelay(waitNs * kj::NANOSECONDS).then([this, buffer, minBytes, maxBytes] {
        return tryRead(buffer, minBytes, maxBytes);
      });
    }
  }
  return readInto(static_cast<kj::byte*>(buffer), minBytes, maxBytes, 0);
}

void BatchingStream::limitMessageRate(kj::Timer& timer, uint64_t perWindow, int64_t windowNs,
                                      kj::Function<void()> onLimited) {
  rateTimer_ = &timer;
  ratePerWindow_ = perWindow > 0 ? perWindow : 1;
  rateWindowNs_ = windowNs > 0 ? windowNs : 1;
  onRateLimited_ = kj::mv(onLimited);
}

bool BatchingStream::consumed(const kj::byte* bytes, size_t size) {
  if (size == 0) return true;
  if (!frames_.midMessage()) messageStartedNs_ = monotonicNowNs();
  frames_.consume(bytes, size);
  if (!frames_.midMessage()) messageStartedNs_ = 0;
  if (frames_.announcedBodyBytes() <= messageLimit_) return true;
  messageRefused_ = true;
  KJ_IF_MAYBE (exceeded, onMessageExceeded_) {
    auto callback = kj::mv(*exceeded);
    onMessageExceeded_ = nullptr;
    callback(frames_.announcedBodyBytes());
  }
  return false;
}

void BatchingStream::limitMessageBytes(uint64_t bytes, kj::Function<void(uint64_t)> onExceeded) {
  messageLimit_ = bytes;
  onMessageExceeded_ = kj::mv(onExceeded);
}

kj::Promise<size_t> BatchingStream::readInto(kj::byte* out, size_t minBytes, size_t maxBytes, size_t done) {
  if (messageRefused_) return KJ_EXCEPTION(FAILED, "incoming message over the size limit");
  const size_t available = std::min(maxBytes - done, readEnd_ - readPos_);
  if (available > 0) {
    std::memcpy(out + done, readBuffer_.begin() + readPos_, available);
    if (!consumed(out + done, available)) return KJ_EXCEPTION(FAILED, "incoming message over the size limit");
    readPos_ += available;
    done += available;
  }
  if (done >= minBytes) return done;
  readPos_ = readEnd_ = 0;
  if (maxBytes - done >= readBuffer_.size()) {
    // A large message body: no point staging it.
    return inner_->tryRead(out + done, minBytes - done, maxBytes - done).then([this, out, done](size_t n) -> size_t {
      if (!consumed(out + done, n))
        kj::throwFatalException(KJ_EXCEPTION(FAILED, "incoming message over the size limit"));
      return done + n;
    });
  }
  return inner_->tryRead(readBuffer_.begin(), 1, readBuffer_.size())
      .then([this, out, minBytes, maxBytes, done](size_t n) -> kj::Promise<size_t> {
        if (n == 0) return done;  // end of stream: the caller sees a short read
        readEnd_ = n;
        return readInto(out, minBytes, maxBytes, done);
      });
}

kj::Promise<BatchingStream::ReadResult> BatchingStream::tryReadWithFds(void* buffer, size_t minBytes, size_t maxBytes,
                                                                       kj::AutoCloseFd* fdBuffer, size_t maxFds) {
  if (reads_ == Reads::passThrough) return inner_->tryReadWithFds(buffer, minBytes, maxBytes, fdBuffer, maxFds);
  // Read-ahead ends accept no fds: any the peer attached are dropped (closed) by the kernel.
  return tryRead(buffer, minBytes, maxBytes).then([](size_t n) { return ReadResult{n, 0}; });
}

kj::Promise<BatchingStream::ReadResult> BatchingStream::tryReadWithStreams(void*, size_t, size_t,
                                                                           kj::Own<kj::AsyncCapabilityStream>*,
                                                                           size_t) {
  return KJ_EXCEPTION(UNIMPLEMENTED, "xr-compositor passes fds, not streams");
}

void BatchingStream::abortRead() { inner_->abortRead(); }

kj::Maybe<int> BatchingStream::getFd() const { return inner_->getFd(); }

}  // namespace xrc
