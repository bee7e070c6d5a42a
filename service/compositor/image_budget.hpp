// The image memory clients make the daemon hold: each swapchain's shared images (exported to
// the client) and the runtime images they are copied into. Charged per client and in total
// before the images are made, so a client asking for more gets a clear refusal instead of
// driving the daemon out of memory. A charge is given back when its swapchain is freed (after
// its last copy, which may be well after the client destroyed it).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>

#include "xrc/result.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

class ImageBudget {
 public:
  ImageBudget(uint64_t perClientBytes, uint64_t totalBytes) : perClient_(perClientBytes), total_(totalBytes) {}

  // Gives its bytes back on destruction. Move-only; any thread.
  class Charge {
   public:
    Charge() = default;
    Charge(Charge&& other) noexcept { *this = std::move(other); }
    Charge& operator=(Charge&& other) noexcept;
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;
    ~Charge() { reset(); }
    void reset();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class ImageBudget;
    ImageBudget* budget_ = nullptr;
    uint32_t clientId_ = 0;
    uint64_t bytes_ = 0;
  };

  // `bytes` more for `clientId`, or `exhausted` naming the limit that would be passed
  // (max_image_mib_per_client or max_image_mib_total; also stored in `*limitHit` if given).
  Result<Charge> charge(uint32_t clientId, uint64_t bytes, const char** limitHit = nullptr) XRC_EXCLUDES(mutex_);
  uint64_t clientBytes(uint32_t clientId) const XRC_EXCLUDES(mutex_);
  uint64_t totalBytes() const XRC_EXCLUDES(mutex_);
  uint64_t perClientLimit() const { return perClient_; }
  uint64_t totalLimit() const { return total_; }

 private:
  void giveBack(uint32_t clientId, uint64_t bytes) XRC_EXCLUDES(mutex_);

  const uint64_t perClient_;
  const uint64_t total_;
  mutable Mutex mutex_;
  std::map<uint32_t, uint64_t> byClient_ XRC_GUARDED_BY(mutex_);
  uint64_t used_ XRC_GUARDED_BY(mutex_) = 0;
};

}  // namespace xrc
