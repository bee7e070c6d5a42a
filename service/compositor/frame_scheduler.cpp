#include "frame_scheduler.hpp"

#include <time.h>

#include <algorithm>

namespace xrc {

namespace {
int64_t processCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
constexpr size_t kCpuWindowFrames = 90;  // about a second at 90 Hz
}  // namespace

void FrameScheduler::addClient(std::shared_ptr<ClientRecord> client) {
  Lock lock(mutex_);
  const uint32_t id = client->id;
  entries_[id].client = std::move(client);
  if (primary_ == 0) electPrimary();
}

std::vector<CommittedFrame> FrameScheduler::removeClient(uint32_t clientId) {
  Lock lock(mutex_);
  std::vector<CommittedFrame> released;
  auto it = entries_.find(clientId);
  if (it == entries_.end()) return released;
  if (it->second.shown) released.push_back(std::move(*it->second.shown));
  if (it->second.queued) released.push_back(std::move(*it->second.queued));
  entries_.erase(it);
  if (primary_ == clientId) {
    primary_ = 0;
    electPrimary();
  }
  return released;
}

void FrameScheduler::electPrimary() {
  // The longest-connected normal session (lowest id) that is not hung takes over.
  for (const auto& [id, e] : entries_) {
    if (!e.client->overlay && !e.client->hung.load()) {
      primary_ = id;
      return;
    }
  }
}

void FrameScheduler::setLatchOnDemand(std::function<void()> latch) {
  Lock lock(latchHookMutex_);
  latchesOnDemand_.store(latch != nullptr);
  latchHook_ = std::move(latch);
}

void FrameScheduler::latchDue() {
  if (!latchesOnDemand_.load()) return;
  Lock lock(latchHookMutex_);
  if (latchHook_) latchHook_();
}

void FrameScheduler::setHung(uint32_t clientId, bool hung) {
  latchDue();  // the vsyncs before it was found hung showed what it had
  Lock lock(mutex_);
  auto it = entries_.find(clientId);
  if (it == entries_.end()) return;
  it->second.client->hung.store(hung);
  if (hung && primary_ == clientId) {
    primary_ = 0;
    electPrimary();
    if (primary_ == 0) primary_ = clientId;  // nobody else to show: it keeps its last frame up
  } else if (!hung && primary_ == 0) {
    electPrimary();
  }
}

Status FrameScheduler::setPrimary(uint32_t clientId) {
  latchDue();  // the vsyncs before the switch showed the old primary
  Lock lock(mutex_);
  auto it = entries_.find(clientId);
  if (it == entries_.end()) return makeError(ErrorCode::notFound, "no client {}", clientId);
  if (it->second.client->overlay) {
    return makeError(ErrorCode::invalidArgument,
                     "client {} is an overlay session; only a normal session can be primary", clientId);
  }
  primary_ = clientId;
  return {};
}

Visibility FrameScheduler::visibilityLocked(const Entry& e) const {
  if (e.client->overlay) return {system_.visible, false};
  const bool primary = e.client->id == primary_;
  return {primary && system_.visible, primary && system_.focused};
}

void FrameScheduler::setSystemVisibility(Visibility system) {
  latchDue();
  Lock lock(mutex_);
  system_ = system;
}

Visibility FrameScheduler::visibility(uint32_t clientId) const {
  Lock lock(mutex_);
  auto it = entries_.find(clientId);
  return it == entries_.end() ? Visibility{} : visibilityLocked(it->second);
}

std::vector<CommittedFrame> FrameScheduler::commit(CommittedFrame frame, int64_t nowNs) {
  Lock lock(mutex_);
  std::vector<CommittedFrame> released;
  auto it = entries_.find(frame.clientId);
  if (it == entries_.end()) {
    released.push_back(std::move(frame));
    return released;
  }
  Entry& e = it->second;
  ClientRecord& c = *e.client;
  if (e.lastCommitNs != 0) c.frameIntervalUs.add(double(nowNs - e.lastCommitNs) / 1e3);
  e.lastCommitNs = nowNs;
  framesSinceSelect_++;
  frame.committedNs = nowNs;
  if (!visibilityLocked(e).visible) {
    c.framesHidden++;
    released.push_back(std::move(frame));
    return released;
  }
  if (e.queued) {
    // Superseded before its time came: the newest completed frame wins.
    c.framesDropped++;
    released.push_back(std::move(*e.queued));
  }
  e.queued = std::move(frame);
  return released;
}

DisplaySelection FrameScheduler::select(int64_t vsyncNs, int64_t periodNs) {
  const int64_t cpuNow = processCpuNs();
  DisplaySelection out;
  std::vector<std::function<void()>> latched;
  {
    Lock lock(mutex_);
    out = selectLocked(vsyncNs, periodNs, cpuNow);
    latched = takeLatchWaitersLocked(vsyncNs, /*idle=*/false);
  }
  // Outside the scheduler's lock (though maybe under the display's): a waiter hands the news on.
  for (auto& done : latched) done();
  return out;
}

DisplaySelection FrameScheduler::selectLocked(int64_t vsyncNs, int64_t periodNs, int64_t cpuNow) {
  DisplaySelection out;
  // System stats: vsyncs skipped since the last display frame, CPU spent per display frame.
  if (lastVsyncNs_ != 0 && periodNs > 0 && vsyncNs - lastVsyncNs_ > periodNs + periodNs / 2) {
    missedFrames_ += uint64_t((vsyncNs - lastVsyncNs_ + periodNs / 2) / periodNs - 1);
  }
  if (lastCpuNs_ != 0) {
    const int64_t cpu = cpuNow - lastCpuNs_;
    cpuUs_.add(double(cpu) / 1e3);
    cpuWindow_.push_back({cpu, framesSinceSelect_});
    if (cpuWindow_.size() > kCpuWindowFrames) cpuWindow_.pop_front();
  }
  lastVsyncNs_ = vsyncNs;
  lastCpuNs_ = cpuNow;
  framesSinceSelect_ = 0;

  struct Placed {
    bool overlay;
    uint32_t placement;
    uint32_t id;
    const CommittedFrame* frame;
  };
  std::vector<Placed> placed;
  for (auto& [id, e] : entries_) {
    ClientRecord& c = *e.client;
    if (!visibilityLocked(e).visible) {
      // Hidden: nothing of it stays on screen; a frame queued while it was visible is dropped.
      if (e.shown) out.released.push_back(std::move(*e.shown));
      if (e.queued) {
        c.framesDropped++;
        out.released.push_back(std::move(*e.queued));
      }
      e.shown.reset();
      e.queued.reset();
      continue;
    }
    if (e.queued && e.queued->targetNs <= vsyncNs) {
      CommittedFrame& next = *e.queued;
      c.framesDisplayed++;
      // Shown after its target vsync (half a period of slack for clock jitter) is late.
      if (vsyncNs - next.targetNs > periodNs / 2) c.framesLate++;
      c.latencyUs.add(double(vsyncNs - next.committedNs) / 1e3);
      if (e.shown) out.released.push_back(std::move(*e.shown));
      e.shown = std::move(next);
      e.queued.reset();
    } else if (e.shown && vsyncNs - e.shown->targetNs >= int64_t(c.displayPeriods.load()) * periodNs - periodNs / 2) {
      // Its next frame was due here (by its cadence) and is not ready: the last complete one
      // stays on screen again.
      c.framesStale++;
    }
    if (e.shown) placed.push_back({c.overlay, c.overlayPlacement, id, &*e.shown});
    if (e.queued) out.framesQueued = true;
  }
  // The primary's layers at the bottom, then overlays by placement (ties: connection order).
  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    if (a.overlay != b.overlay) return !a.overlay;
    if (a.placement != b.placement) return a.placement < b.placement;
    return a.id < b.id;
  });
  for (const Placed& p : placed) out.shown.push_back(*p.frame);
  if (auto mode = out.environmentBlendMode()) blendMode_ = mode;
  return out;
}

void FrameScheduler::displayed(int64_t workNs, std::optional<int64_t> wakeDelayNs) {
  workUs_.add(double(workNs) / 1e3);
  if (wakeDelayNs) wakeDelayUs_.add(double(*wakeDelayNs) / 1e3);
}

void FrameScheduler::displayIdle() {
  std::vector<std::function<void()>> waiting;
  {
    Lock lock(mutex_);
    lastVsyncNs_ = 0;
    lastCpuNs_ = 0;
    waiting = takeLatchWaitersLocked(0, /*idle=*/true);
  }
  for (auto& done : waiting) done();
}

bool FrameScheduler::latchPendingLocked(int64_t vsyncNs, int64_t periodNs) const {
  if (lastVsyncNs_ == 0 || periodNs <= 0) return false;          // idle: nothing will latch it soon
  if (lastVsyncNs_ >= vsyncNs - periodNs / 2) return false;      // latched already
  return lastVsyncNs_ >= vsyncNs - 2 * periodNs - periodNs / 2;  // else the display is stalled
}

bool FrameScheduler::latchPending(int64_t vsyncNs, int64_t periodNs) const {
  Lock lock(mutex_);
  return latchPendingLocked(vsyncNs, periodNs);
}

bool FrameScheduler::whenLatched(int64_t vsyncNs, int64_t periodNs, std::function<void()> done) {
  Lock lock(mutex_);
  if (!latchPendingLocked(vsyncNs, periodNs)) return false;
  latchWaiters_.push_back({vsyncNs - periodNs / 2, std::move(done)});
  return true;
}

std::vector<std::function<void()>> FrameScheduler::takeLatchWaitersLocked(int64_t vsyncNs, bool idle) {
  std::vector<std::function<void()>> due;
  std::erase_if(latchWaiters_, [&](LatchWaiter& w) {
    if (!idle && w.dueAtVsyncNs > vsyncNs) return false;
    due.push_back(std::move(w.done));
    return true;
  });
  return due;
}

DisplayStats FrameScheduler::displayStats() const {
  DisplayStats s;
  s.workUsP50 = workUs_.percentile(50);
  s.workUsP99 = workUs_.percentile(99);
  s.wakeDelayUsP50 = wakeDelayUs_.percentile(50);
  s.wakeDelayUsP99 = wakeDelayUs_.percentile(99);
  s.cpuUsP50 = cpuUs_.percentile(50);
  s.cpuUsP99 = cpuUs_.percentile(99);
  Lock lock(mutex_);
  s.missedFrames = missedFrames_;
  s.primaryClientId = primary_;
  s.environmentBlendMode = blendMode_;
  int64_t cpu = 0;
  uint64_t frames = 0;
  for (const CpuSample& sample : cpuWindow_) {
    cpu += sample.cpuNs;
    frames += sample.clientFrames;
  }
  s.cpuUsPerClientFrame = frames == 0 ? 0 : double(cpu) / 1e3 / double(frames);
  return s;
}

}  // namespace xrc
