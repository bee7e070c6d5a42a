// The client's end of the wire: a Unix socket to the daemon carrying a two-party RPC system with
// fd passing, run by a private I/O thread.
//
// Every Cap'n Proto object lives on that thread. Application threads hand it work: `post()`
// queues a function and returns at once (the calls that must not block: acquire, wait, release,
// beginFrame, endFrame), `call()` queues one and waits, bounded, for the answer it produces.
// Queued work runs in order, and the messages one pass of the I/O loop produces leave in one
// socket write. So the library can be used from any thread. `postDeferred()` queues work without
// waking the thread at all: it leaves with the next message that does (a release costs the caller
// its Vulkan submit and a queue push; docs/SYNC.md, "Releases travel with the next call").
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <kj/function.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runnable_wait.hpp"
#include "xrc.capnp.h"
#include "xrc/batching_stream.hpp"
#include "xrc/result.hpp"
#include "xrc/thread_annotations.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::client {

class ReleaseAnswers;

// What lives on the I/O thread; only functions run by post()/call() touch it.
struct IoState {
  IoState(kj::AsyncIoContext& io, kj::Own<kj::AsyncCapabilityStream> stream,
          std::shared_ptr<std::atomic<uint64_t>> socketWrites);
  ~IoState() noexcept(false);

  kj::AsyncIoContext& io;
  kj::Own<kj::AsyncCapabilityStream> stream;
  BatchingStream* batching;  // stream, as what it is
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
  wire::Compositor::Client bootstrap;
  // Capabilities the library's objects hold, by what they are.
  wire::Session::Client session{nullptr};
  std::map<uint32_t, wire::Swapchain::Client> swapchains;
  // Where a release settlement reported with a frame timing (1.13) goes: by swapchain id, known
  // once an endFrame carried one of its releases.
  std::map<uint32_t, std::weak_ptr<ReleaseAnswers>> releaseAnswers;
  // The connection is gone: no settlement will come; acquires waiting for one go on locally.
  void abandonReleaseAnswers();
  wire::Control::Client control{nullptr};
  // The last endFrame's answer, kept until the next endFrame has been sent. Dropping an answer
  // sends the call's Finish message; dropped at once, that message leaves alone and wakes the
  // daemon for nothing else, once per frame. Dropped after the next call, it shares its write.
  kj::Maybe<capnp::Response<wire::Session::EndFrameResults>> heldEndFrameAnswer;
  kj::TaskSet tasks;  // answers nobody waits for; failures are reported through their own handlers

 private:
  struct LogFailures : kj::TaskSet::ErrorHandler {
    void taskFailed(kj::Exception&&) override {}  // each task reports its own failure
  } logFailures_;
};

// Where call() answers arrive: set once on the I/O thread, read by the waiting caller.
template <typename T>
class AnswerSlot {
 public:
  // Owners keep the slot in a shared_ptr that the setting side holds too: the waiter may return
  // (and drop its reference) as soon as the value is there.
  void set(Result<T> value) {
    Lock lock(mutex_);
    value_.emplace(std::move(value));
    ready_.notify_all();
  }
  // Waits up to `timeout` of time this process could run (runnable_wait.hpp).
  std::optional<Result<T>> waitFor(std::chrono::milliseconds timeout) {
    Lock lock(mutex_);
    if (!waitRunnable(ready_, lock.native(), timeout, [&] { return value_.has_value(); })) return std::nullopt;
    return std::move(value_);
  }
  // Waits as waitFor() does, but leaves the value for it; false: none came within `timeout`.
  bool waitUntilSet(std::chrono::milliseconds timeout) {
    Lock lock(mutex_);
    return waitRunnable(ready_, lock.native(), timeout, [&] { return value_.has_value(); });
  }
  // What `read` makes of the value, where one (not an error) is there and not taken yet.
  template <typename F>
  auto look(F&& read) -> std::optional<decltype(read(std::declval<const T&>()))> {
    Lock lock(mutex_);
    if (value_ && *value_) return read(value_->value());
    return std::nullopt;
  }
  // Changes the value in place where one is there and not taken yet.
  template <typename F>
  void patch(F&& change) {
    Lock lock(mutex_);
    if (value_ && *value_) change(value_->value());
  }

 private:
  Mutex mutex_;
  std::condition_variable ready_;
  std::optional<Result<T>> value_ XRC_GUARDED_BY(mutex_);
};

class RpcLink {
 public:
  using Work = kj::Function<void(IoState&)>;
  template <typename T>
  using CallWork = kj::Function<kj::Promise<Result<T>>(IoState&)>;

  // Connects (on the new I/O thread) and returns once the connection is up or has failed.
  static Result<std::unique_ptr<RpcLink>> open(const std::string& socketPathOrEmpty);
  RpcLink();
  ~RpcLink();  // finishes the queued work, flushes, drops every capability on the I/O thread
  RpcLink(const RpcLink&) = delete;
  RpcLink& operator=(const RpcLink&) = delete;

  void post(Work work);
  // Queues `work` without waking the I/O thread: it runs, in order, when a later post() or call()
  // wakes the thread, or at flush(). The caller saves an eventfd write and the wake-up it causes.
  void postDeferred(Work work);
  // Wakes the I/O thread if deferred work is waiting; for a caller about to wait on its answer.
  void flush();

  // Runs `work` on the I/O thread and waits for the answer it produces, at most `timeout`
  // (then: ErrorCode::timeout; the answer is dropped when it comes). A broken connection
  // becomes an ErrorCode::internal error and marks the link disconnected.
  template <typename T>
  Result<T> call(CallWork<T> work, const char* what, std::chrono::milliseconds timeout = kDefaultCallTimeout);

  // Set by the I/O thread when the daemon closes the connection or a call finds it broken.
  bool disconnected() const { return disconnected_.load(std::memory_order_acquire); }
  void markDisconnected() { disconnected_.store(true, std::memory_order_release); }
  const std::string& path() const { return path_; }
  // Writes to the daemon's socket so far (each carries one or more messages).
  uint64_t socketWrites() const { return socketWrites_->load(std::memory_order_relaxed); }

  static constexpr std::chrono::milliseconds kDefaultCallTimeout{10000};

 private:
  void run(UniqueFd socket, const std::shared_ptr<AnswerSlot<bool>>& started);
  void wake();

  std::string path_;
  UniqueFd wakeFd_;  // eventfd the I/O loop watches
  std::atomic<bool> disconnected_{false};
  std::shared_ptr<std::atomic<uint64_t>> socketWrites_ = std::make_shared<std::atomic<uint64_t>>(0);
  Mutex queueMutex_;
  std::vector<Work> queue_ XRC_GUARDED_BY(queueMutex_);
  // The eventfd was written since the I/O thread last took the queue.
  bool wakePending_ XRC_GUARDED_BY(queueMutex_) = false;
  bool stopping_ XRC_GUARDED_BY(queueMutex_) = false;
  std::thread thread_;
};

// A broken connection's exception, as an Error; marks the link disconnected.
Error connectionError(RpcLink& link, const kj::Exception& e, const char* what);

template <typename T>
Result<T> RpcLink::call(CallWork<T> work, const char* what, std::chrono::milliseconds timeout) {
  if (disconnected()) return makeError(ErrorCode::internal, "{}: the connection to xr-compositord was lost", what);
  auto slot = std::make_shared<AnswerSlot<T>>();
  post([this, slot, what, work = kj::mv(work)](IoState& state) mutable {
    kj::Promise<Result<T>> answer = nullptr;
    KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { answer = work(state); })) {
      slot->set(connectionError(*this, *e, what));
      return;
    }
    state.tasks.add(answer.then([slot](Result<T>&& r) { slot->set(std::move(r)); },
                                [this, slot, what](kj::Exception&& e) { slot->set(connectionError(*this, e, what)); }));
  });
  auto answer = slot->waitFor(timeout);
  if (!answer)
    return makeError(ErrorCode::timeout, "{}: no answer from xr-compositord within {} ms", what, timeout.count());
  return std::move(*answer);
}

}  // namespace xrc::client
