// A stream wrapper that lets the RPC system's small messages share syscalls.
//
// Cap'n Proto 0.9 writes every message with its own sendmsg as soon as the event loop turns, and
// reads each message with separate header and body reads. A client's frame sends a burst of small
// calls (beginFrame, acquire, wait, release) and the daemon answers each, so per-message syscalls
// and wake-ups dominate the frame path's CPU cost (docs/BENCHMARKS.md). This wrapper:
//  - queues plain writes and hands them to the socket in one write at the end of the current
//    event-loop pass (kj::evalLast), in order, with at most one socket write outstanding; writes
//    carrying fds wait until everything before them is written and go out on their own, so each
//    fd arrives with its own message;
//  - optionally reads ahead into a buffer, so a burst of messages costs one read. Read-ahead is
//    only for ends that never receive fds (the daemon), because buffered bytes lose the fds
//    attached to them.
#pragma once

#include <kj/async-io.h>
#include <kj/function.h>
#include <kj/vector.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "xrc/message_frame_tracker.hpp"

namespace xrc {

class BatchingStream final : public kj::AsyncCapabilityStream, private kj::TaskSet::ErrorHandler {
 public:
  enum class Reads { passThrough, readAhead };

  // `writeCounter` (optional) counts the socket writes, readable from any thread.
  BatchingStream(kj::Own<kj::AsyncCapabilityStream> inner, Reads reads,
                 std::shared_ptr<std::atomic<uint64_t>> writeCounter = nullptr);
  ~BatchingStream() noexcept(false);

  // kj::AsyncOutputStream
  kj::Promise<void> write(const void* buffer, size_t size) override;
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override;
  kj::Promise<void> whenWriteDisconnected() override;

  // kj::AsyncInputStream
  kj::Promise<size_t> tryRead(void* buffer, size_t minBytes, size_t maxBytes) override;

  // kj::AsyncIoStream
  void shutdownWrite() override;
  void abortRead() override;
  kj::Maybe<int> getFd() const override;

  // kj::AsyncCapabilityStream
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

  // Hands everything queued to the socket now (one write), unless a write is still in flight.
  void flushNow() { flushQueued(); }
  // Resolves once no socket write is in flight (rejects if a write failed).
  kj::Promise<void> whenIdle();

  // Counters for tests and benchmarks: how many writes reached the socket.
  uint64_t socketWrites() const { return socketWrites_->load(std::memory_order_relaxed); }

  // Bytes written but not yet taken by the socket (the peer is not reading). Past `bytes`,
  // `onExceeded` runs once and every later write fails: a peer that never reads its answers
  // cannot make this end buffer them without bound.
  void limitUnsentBytes(size_t bytes, kj::Function<void()> onExceeded);
  size_t unsentBytes() const { return queued_.size() + inFlightBytes_; }

  // Read-ahead ends: when a message's segment table announces more than `bytes`, the read that
  // completes the table fails (the reader never sees the size, so it allocates nothing), every
  // later read fails too, and `onExceeded` runs once.
  void limitMessageBytes(uint64_t bytes, kj::Function<void(uint64_t announced)> onExceeded);
  // Read-ahead ends: the reader gets at most `perWindow` messages per `windowNs`; the next
  // message waits (on `timer`) for the next window, and `onLimited` runs once for each window
  // that made one wait. One peer's flood of calls then cannot keep the daemon's thread from the
  // others.
  void limitMessageRate(kj::Timer& timer, uint64_t perWindow, int64_t windowNs, kj::Function<void()> onLimited);
  // Read-ahead ends: whether the reader is part-way through a message, since when (monotonic
  // ns), and how many whole messages it has read.
  bool midMessage() const { return frames_.midMessage(); }
  int64_t messageStartedNs() const { return messageStartedNs_; }
  uint64_t messagesRead() const { return frames_.messages(); }

 private:
  void append(kj::ArrayPtr<const kj::byte> bytes);
  // Tracks the framing of bytes handed to the reader; false when they announce a message over
  // the limit (the read must fail).
  bool consumed(const kj::byte* bytes, size_t size);
  void scheduleFlush();
  void flushQueued();
  // The write in flight is done: its buffer is emptied for the next flush (or given up, if large).
  void releaseSent();
  void wakeIdleWaiters();
  kj::Promise<size_t> readInto(kj::byte* out, size_t minBytes, size_t maxBytes, size_t done);
  void taskFailed(kj::Exception&& exception) override;

  kj::Own<kj::AsyncCapabilityStream> inner_;
  const Reads reads_;

  kj::Vector<kj::byte> queued_;  // written by the caller, not yet handed to the socket
  // The bytes of the socket write in flight. The two buffers trade places at each flush, so that
  // in the steady state neither is allocated again (one handed over and given up per flush was a
  // few heap allocations per message: the hand-over's trim, and the next message's growth).
  kj::Vector<kj::byte> sending_;
  bool flushScheduled_ = false;
  bool writeInFlight_ = false;  // at most one socket write outstanding keeps the order
  kj::Vector<kj::Own<kj::PromiseFulfiller<void>>> idleWaiters_;
  kj::Maybe<kj::Exception> failure_;  // a failed socket write fails every later write
  std::shared_ptr<std::atomic<uint64_t>> socketWrites_;
  size_t inFlightBytes_ = 0;
  size_t unsentLimit_ = SIZE_MAX;
  kj::Maybe<kj::Function<void()>> onUnsentExceeded_;

  MessageFrameTracker frames_;
  uint64_t messageLimit_ = UINT64_MAX;
  kj::Maybe<kj::Function<void(uint64_t)>> onMessageExceeded_;
  bool messageRefused_ = false;

  kj::Timer* rateTimer_ = nullptr;
  uint64_t ratePerWindow_ = 0;
  int64_t rateWindowNs_ = 0;
  int64_t rateWindowStartNs_ = 0;
  uint64_t messagesAtWindowStart_ = 0;
  bool limitedThisWindow_ = false;
  kj::Function<void()> onRateLimited_;
  int64_t messageStartedNs_ = 0;

  kj::Array<kj::byte> readBuffer_;
  size_t readPos_ = 0, readEnd_ = 0;

  kj::TaskSet tasks_;  // the scheduled flush; declared last so it is cancelled first
};

}  // namespace xrc
