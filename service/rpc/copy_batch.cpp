#include "copy_batch.hpp"

namespace xrc {

namespace {
int64_t nanosSinceOrigin(kj::TimePoint t) { return (t - kj::origin<kj::TimePoint>()) / kj::NANOSECONDS; }
}  // namespace

CopyBatch::CopyBatch(kj::Timer& timer, std::chrono::microseconds window, std::chrono::microseconds beforeLatch,
                     std::function<DisplayClock()> clock)
    : timer_(timer), window_(window), beforeLatch_(beforeLatch), clock_(std::move(clock)) {}

std::optional<kj::TimePoint> CopyBatch::letGoBeforeLatch() const {
  if (window_.count() > 0 || beforeLatch_.count() <= 0) return std::nullopt;
  const DisplayClock clock = clock_ ? clock_() : DisplayClock{};
  if (clock.periodNs <= 0) return std::nullopt;
  // The event loop's timer reads CLOCK_MONOTONIC, the display clock's time base. The display
  // takes its frames `latchLeadNs` before each vsync: the next latch after now.
  const int64_t nowNs = nanosSinceOrigin(timer_.now());
  const int64_t latchNs = clock.nextLatchedVsyncAfter(nowNs) - clock.leadNs();
  const int64_t letGoNs = latchNs - int64_t(beforeLatch_.count()) * 1000;
  // Too near the latch to wait; or a batch still open for a later let-go (the display clock
  // moved): joining it would hold this copy past its latch.
  if (letGoNs <= nowNs || (state_->taking && state_->letGoNs > letGoNs)) return std::nullopt;
  return kj::origin<kj::TimePoint>() + letGoNs * kj::NANOSECONDS;
}

kj::Promise<void> CopyBatch::join() {
  std::optional<kj::TimePoint> letGo;
  if (window_.count() > 0) {
    letGo = timer_.now() + window_.count() * kj::MICROSECONDS;
  } else {
    letGo = letGoBeforeLatch();
  }
  if (!letGo) return kj::READY_NOW;
  state_->copies++;
  return batchLetGoAt(*letGo);
}

std::optional<kj::Promise<void>> CopyBatch::heldCopiesLetGo(int64_t notAfterNs) {
  auto letGo = letGoBeforeLatch();
  if (!letGo || nanosSinceOrigin(*letGo) > notAfterNs) return std::nullopt;
  return batchLetGoAt(*letGo);
}

kj::Promise<void> CopyBatch::batchLetGoAt(kj::TimePoint letGo) {
  State& state = *state_;
  if (!state.taking) {
    // The previous batch (if any) has been let go: its forked promise resolved, so replacing it
    // here, outside its continuation, only drops this object's reference to it. Only the batch
    // opened here can end `taking`, as no other is open until it does.
    state.taking = true;
    state.letGoNs = nanosSinceOrigin(letGo);
    state.batches++;
    batch_ = timer_.atTime(letGo).then([state = state_] { state->taking = false; }).fork();
  }
  return batch_->addBranch();
}

}  // namespace xrc
