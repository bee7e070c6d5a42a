// Who is connected and what they did: the source of `xr-compositorctl status`. Counters are
// updated from the KJ thread and the frame worker; reads come from the control interface.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "swapchain_core.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

// Fixed-size window of samples with percentiles (per-frame stats).
class SampleRing {
 public:
  explicit SampleRing(size_t capacity = 512) : capacity_(capacity) {}
  void add(double sample) XRC_EXCLUDES(mutex_);
  // p in [0, 100]; 0 when empty.
  double percentile(double p) const XRC_EXCLUDES(mutex_);
  size_t count() const XRC_EXCLUDES(mutex_);

 private:
  size_t capacity_;
  mutable Mutex mutex_;
  std::vector<double> samples_ XRC_GUARDED_BY(mutex_);
  size_t next_ XRC_GUARDED_BY(mutex_) = 0;
};

struct ClientRecord {
  uint32_t id = 0;
  std::string name;
  uint32_t pid = 0;
  uint32_t uid = 0;
  SyncMode syncMode = SyncMode::host;
  bool overlay = false;           // fixed at connect
  uint32_t overlayPlacement = 0;  // overlays: higher on top
  std::atomic<uint64_t> framesSubmitted{0};
  std::atomic<uint64_t> releases{0};
  // Frame accounting by the FrameScheduler (see ClientStatus in xrc.capnp).
  std::atomic<uint64_t> framesDisplayed{0};
  std::atomic<uint64_t> framesLate{0};
  std::atomic<uint64_t> framesDropped{0};
  std::atomic<uint64_t> framesHidden{0};
  std::atomic<uint64_t> framesStale{0};
  // Timeline mode: releases not copied, the client's rendering unfinished after hung_client_timeout_ms.
  std::atomic<uint64_t> releasesRenderTimedOut{0};
  std::atomic<uint64_t> copySubmissions{0};      // queue submissions that carried its copies
  std::atomic<uint64_t> hostCopies{0};           // host mode: copies made on the daemon's thread
  std::atomic<uint64_t> waitsAnsweredAtOnce{0};  // 1.18: implied waits answered as their endFrame came
  std::atomic<uint64_t> releasesSkipped{0};      // acknowledged without a copy: over max_copy_mib_per_period
  std::atomic<uint32_t> displayPeriods{1};
  // When it last called waitFrame or endFrame (0: never); whether it is marked hung for not
  // doing so (HungClientWatch).
  std::atomic<int64_t> lastProgressNs{0};
  std::atomic<bool> hung{false};
  SampleRing gpuCopyUs;   // copies submitted to a queue: GPU timestamps
  SampleRing hostCopyUs;  // copies made on the daemon's thread: their time there
  SampleRing releaseUs;
  SampleRing latencyUs;
  SampleRing frameIntervalUs;

  // Closes the client's connection (Control.kick, runtime lost) and takes it out of the registry
  // at once. Set at connect; KJ thread only.
  std::function<void()> disconnect;

  mutable Mutex swapchainsMutex;
  std::map<uint32_t, std::weak_ptr<SwapchainCore>> swapchains XRC_GUARDED_BY(swapchainsMutex);
};

class ClientRegistry {
 public:
  struct NewClient {
    std::string name;
    uint32_t pid = 0, uid = 0;
    SyncMode syncMode = SyncMode::host;
    bool overlay = false;
    uint32_t overlayPlacement = 0;
  };
  std::shared_ptr<ClientRecord> add(NewClient client) XRC_EXCLUDES(mutex_);
  void remove(uint32_t id) XRC_EXCLUDES(mutex_);
  std::shared_ptr<ClientRecord> find(uint32_t id) const XRC_EXCLUDES(mutex_);
  std::vector<std::shared_ptr<ClientRecord>> snapshot() const XRC_EXCLUDES(mutex_);
  bool empty() const XRC_EXCLUDES(mutex_);

 private:
  mutable Mutex mutex_;
  uint32_t nextId_ XRC_GUARDED_BY(mutex_) = 1;
  std::map<uint32_t, std::shared_ptr<ClientRecord>> clients_ XRC_GUARDED_BY(mutex_);
};

}  // namespace xrc
