#include "copy_batch.hpp"

#include <algorithm>

#include "../log.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc {

namespace {
int64_t nanosSinceOrigin(kj::TimePoint t) { return (t - kj::origin<kj::TimePoint>()) / kj::NANOSECONDS; }
}  // namespace

CopyBatch::CopyBatch(kj::Timer& timer, std::chrono::microseconds window, std::shared_ptr<LetGoLead> lead,
                     std::function<DisplayClock()> clock, std::shared_ptr<MonotonicAlarm> alarm)
    : timer_(timer), window_(window), clock_(std::move(clock)), alarm_(std::move(alarm)), lead_(std::move(lead)) {}

CopyBatch::CopyBatch(kj::Timer& timer, std::chrono::microseconds window, std::chrono::microseconds beforeLatch,
                     std::function<DisplayClock()> clock, std::shared_ptr<MonotonicAlarm> alarm)
    : CopyBatch(timer, window, std::make_shared<LetGoLead>(beforeLatch, beforeLatch), std::move(clock),
                std::move(alarm)) {}

CopyBatch::~CopyBatch() { state_->atLetGo = nullptr; }

std::optional<CopyBatch::LatchAndLetGo> CopyBatch::letGoForCopyReadyAt(const DisplayClock& clock,
                                                                       std::chrono::microseconds window,
                                                                       std::chrono::nanoseconds lead, int64_t readyNs) {
  if (window.count() > 0 || lead.count() <= 0 || clock.periodNs <= 0) return std::nullopt;
  // The display takes its frames `latchLeadNs` before each vsync: the next latch after then.
  const int64_t latchNs = clock.nextLatchedVsyncAfter(readyNs) - clock.leadNs();
  return LatchAndLetGo{latchNs, latchNs - int64_t(lead.count())};
}

std::optional<CopyBatch::LetGo> CopyBatch::letGoBeforeLatch() {
  // The event loop's timer reads CLOCK_MONOTONIC, the display clock's time base.
  // The loop's timer reads the clock once per turn: a turn that has run a while reads it here.
  const int64_t nowNs = std::max(nanosSinceOrigin(timer_.now()), alarm_ ? monotonicNowNs() : 0);
  if (!batchesBeforeLatch()) return std::nullopt;  // the display clock unread
  // A batch about to open: the lead follows the frames of the bursts before it.
  if (!state_->taking) lead_->adjust();
  const auto at = letGoForCopyReadyAt(clock_ ? clock_() : DisplayClock{}, window_,
                                      std::chrono::nanoseconds(lead_->leadNs()), nowNs);
  if (!at) return std::nullopt;
  const int64_t latchNs = at->latchNs;
  const int64_t letGoNs = at->letGoNs;
  if (state_->taking && state_->letGoNs > letGoNs && state_->letGoNs > nowNs) {
    // The display clock moved the latch earlier (a runtime's xrWaitFrame came early): the batch
    // open for the later let-go would hold its copies past this latch. It goes now, this copy too.
    if (letGoNow_) letGoNow_->fulfill();
    return std::nullopt;
  }
  // Too near the latch to wait; or a batch whose let-go has come and whose continuation has not
  // run yet (the loop late): it is due, this copy may go now.
  if (letGoNs <= nowNs || (state_->taking && state_->letGoNs <= nowNs)) return std::nullopt;
  return LetGo{kj::origin<kj::TimePoint>() + letGoNs * kj::NANOSECONDS, latchNs};
}

kj::Promise<int64_t> CopyBatch::join() {
  std::optional<LetGo> letGo;
  if (window_.count() > 0) {
    letGo = LetGo{timer_.now() + window_.count() * kj::MICROSECONDS};
  } else {
    letGo = letGoBeforeLatch();
  }
  if (!letGo) return int64_t(0);
  state_->copies++;
  return batchLetGoAt(*letGo);
}

std::optional<kj::Promise<int64_t>> CopyBatch::heldCopiesLetGo(int64_t notAfterNs) {
  auto letGo = letGoBeforeLatch();
  if (!letGo || nanosSinceOrigin(letGo->at) > notAfterNs) return std::nullopt;
  return batchLetGoAt(*letGo);
}

kj::Promise<int64_t> CopyBatch::batchLetGoAt(LetGo letGo) {
  State& state = *state_;
  if (!state.taking) {
    // The previous batch (if any) has been let go: its forked promise resolved, so replacing it
    // here, outside its continuation, only drops this object's reference to it. Only the batch
    // opened here can end `taking`, as no other is open until it does.
    state.taking = true;
    state.letGoNs = nanosSinceOrigin(letGo.at);
    state.batches++;
    kj::Promise<void> wake =
        alarm_ ? alarm_->at(state.letGoNs).attach(std::shared_ptr(alarm_)) : timer_.atTime(letGo.at);
    // Or sooner, where the display clock moves the latch earlier. A fulfiller dropped unfulfilled
    // (a later batch's replaced it, or this object is gone) leaves the let-go to the wake.
    auto now = kj::newPromiseAndFulfiller<void>();
    letGoNow_ = kj::mv(now.fulfiller);
    wake = wake.exclusiveJoin(now.promise.catch_([](kj::Exception&&) -> kj::Promise<void> { return kj::NEVER_DONE; }));
    batch_ = wake.then(
                     [state = state_, latchNs = letGo.latchNs] {
                       // Renderings found done while this batch was held go right after it.
                       if (state->atLetGo) state->atLetGo();
                       state->taking = false;
                       return latchNs;
                     },
                     [state = state_](kj::Exception&& e) {
                       // The alarm failed (a timerfd error): its copies go now, and the next copy
                       // opens a batch of its own.
                       log::error("copy batch: the let-go alarm failed: {}", e.getDescription().cStr());
                       state->taking = false;
                       return int64_t(0);
                     })
                 .fork();
  }
  return batch_->addBranch();
}

}  // namespace xrc
