// The system frame loop's policy, independent of any backend: which normal session is the
// primary, how layers stack (the primary's first, then overlays by placement), and which
// committed frame of every client each display frame shows. The display loop (the display core's,
// or a backend's own through DisplayFeed) calls select() once per display frame; the frame worker commits frames; the
// control interface switches the primary. Frame accounting and the per-client and system stats live here too.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "../backends/display_feed.hpp"
#include "client_registry.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

// System-wide stats of the display loop.
struct DisplayStats {
  uint64_t missedFrames = 0;
  double workUsP50 = 0, workUsP99 = 0;
  double wakeDelayUsP50 = 0, wakeDelayUsP99 = 0;  // headless: vsync -> loop at work
  double cpuUsP50 = 0, cpuUsP99 = 0;
  double cpuUsPerClientFrame = 0;
  uint32_t primaryClientId = 0;
  std::optional<EnvironmentBlendMode> environmentBlendMode;  // of the latest frame that showed any
};

class FrameScheduler final : public DisplayFeed {
 public:
  // A client joined (normal or overlay). The first normal client becomes the primary.
  void addClient(std::shared_ptr<ClientRecord> client) XRC_EXCLUDES(mutex_);
  // The client left: its frames are returned for release; a new primary is chosen if needed.
  std::vector<CommittedFrame> removeClient(uint32_t clientId) override XRC_EXCLUDES(mutex_);
  Status setPrimary(uint32_t clientId) XRC_EXCLUDES(mutex_);
  // A client that stopped making frames (HungClientWatch): while hung it is not elected primary,
  // and a hung primary hands its role to the longest-connected normal client that is not hung.
  void setHung(uint32_t clientId, bool hung) XRC_EXCLUDES(mutex_);
  Visibility visibility(uint32_t clientId) const XRC_EXCLUDES(mutex_);
  // What the display itself allows (a backend whose own session the runtime hid or unfocused):
  // every client's visibility is capped by it. Visible and focused unless a backend says not.
  void setSystemVisibility(Visibility system) override XRC_EXCLUDES(mutex_);

  // A client's frame is complete (frame worker). Returns the frames this one supersedes or that
  // cannot be shown (hidden client, unknown client).
  std::vector<CommittedFrame> commit(CommittedFrame frame, int64_t nowNs) override XRC_EXCLUDES(mutex_);

  // The display loop composes the display frame of vsync `vsyncNs`: per visible client, the
  // newest frame whose target time is due (frames are never shown before their time).
  DisplaySelection select(int64_t vsyncNs, int64_t periodNs) override XRC_EXCLUDES(mutex_);
  // The display loop finished that frame in `workNs` of wall time (select, waiting for the
  // previous composition, record, submit), having begun it `wakeDelayNs` after its vsync (a loop
  // paced by its own timer, as the headless one; none where a runtime paces it).
  void displayed(int64_t workNs, std::optional<int64_t> wakeDelayNs = std::nullopt) override XRC_EXCLUDES(mutex_);
  // The display loop composed nothing at the last select() and sleeps until a frame comes: the
  // vsyncs it sleeps through are not missed frames, its sleep is no display frame's CPU.
  void displayIdle() XRC_EXCLUDES(mutex_);

  DisplayStats displayStats() const XRC_EXCLUDES(mutex_);

  // A display that latches on demand (headless, composed only when read: nothing happens at its
  // vsyncs) gives how to latch every vsync that has passed; null takes it back, once any call
  // under way has returned. Then what changes what a vsync shows (primary, hung, system
  // visibility) first latches the vsyncs before the change, and latchDue() does it for a caller
  // about to read what was shown (status) or to wait for a latch (afterLatch()). Must not be
  // called under the display's locks.
  void setLatchOnDemand(std::function<void()> latch) XRC_EXCLUDES(latchHookMutex_);
  void latchDue() XRC_EXCLUDES(latchHookMutex_);
  bool latchesOnDemand() const { return latchesOnDemand_.load(); }

  // Any thread. A client is woken for its next frame when the display latches the one before it
  // (FramePacer), but the two run on different clocks: a display loop that reaches select() late
  // would find the client's next frame committed already and drop the one it was due to show.
  // `done` runs (on the display thread, or a thread calling displayIdle(), maybe under the
  // display's own locks: it must only hand the news on) once the display has
  // latched vsync `vsyncNs` (select() for a vsync within half a period of it, or later) or went
  // idle. Returns false, without keeping `done`, where there is nothing to wait for: the display
  // latched it already, is idle, or runs more than two periods behind it (stalled: waiting on it
  // would only delay the client).
  bool whenLatched(int64_t vsyncNs, int64_t periodNs, std::function<void()> done) XRC_EXCLUDES(mutex_);
  // The same test without keeping anything: whether whenLatched() would wait now.
  bool latchPending(int64_t vsyncNs, int64_t periodNs) const XRC_EXCLUDES(mutex_);

 private:
  struct Entry {
    std::shared_ptr<ClientRecord> client;
    std::optional<CommittedFrame> shown;   // on display (kept until superseded)
    std::optional<CommittedFrame> queued;  // committed, its time not come yet
    int64_t lastCommitNs = 0;
  };
  Visibility visibilityLocked(const Entry& e) const XRC_REQUIRES(mutex_);
  DisplaySelection selectLocked(int64_t vsyncNs, int64_t periodNs, int64_t cpuNow) XRC_REQUIRES(mutex_);
  bool latchPendingLocked(int64_t vsyncNs, int64_t periodNs) const XRC_REQUIRES(mutex_);
  // The latch waiters due once the display has latched `vsyncNs` (all of them for `idle`).
  std::vector<std::function<void()>> takeLatchWaitersLocked(int64_t vsyncNs, bool idle) XRC_REQUIRES(mutex_);
  void electPrimary() XRC_REQUIRES(mutex_);

  // Held while the hook runs: taken before the display's locks and the scheduler's own.
  Mutex latchHookMutex_;
  std::function<void()> latchHook_ XRC_GUARDED_BY(latchHookMutex_);
  std::atomic<bool> latchesOnDemand_{false};

  mutable Mutex mutex_;
  std::map<uint32_t, Entry> entries_ XRC_GUARDED_BY(mutex_);  // by client id = connection order
  uint32_t primary_ XRC_GUARDED_BY(mutex_) = 0;               // 0: none
  Visibility system_ XRC_GUARDED_BY(mutex_) = {true, true};

  // Display loop stats.
  int64_t lastVsyncNs_ XRC_GUARDED_BY(mutex_) = 0;
  int64_t lastCpuNs_ XRC_GUARDED_BY(mutex_) = 0;
  uint64_t missedFrames_ XRC_GUARDED_BY(mutex_) = 0;
  uint64_t framesSinceSelect_ XRC_GUARDED_BY(mutex_) = 0;  // client frames committed
  std::optional<EnvironmentBlendMode> blendMode_ XRC_GUARDED_BY(mutex_);
  struct LatchWaiter {
    int64_t dueAtVsyncNs;  // the earliest latched vsync that releases it
    std::function<void()> done;
  };
  // One per waiting client, and those whose wait ended otherwise (timeout, client gone) until
  // the next select() or displayIdle() takes them.
  std::vector<LatchWaiter> latchWaiters_ XRC_GUARDED_BY(mutex_);
  struct CpuSample {
    int64_t cpuNs;
    uint64_t clientFrames;
  };
  std::deque<CpuSample> cpuWindow_ XRC_GUARDED_BY(mutex_);  // the last second or so
  SampleRing workUs_;
  SampleRing wakeDelayUs_;
  SampleRing cpuUs_;
};

}  // namespace xrc
