// What a backend that runs its own display loop (the openxr backend: its runtime paces the frames)
// asks the compositor for each display frame, and tells it. The compositor's FrameScheduler is
// the one implementation; a backend sees only this.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backend.hpp"

namespace xrc {

struct Visibility {
  bool visible = false;
  bool focused = false;
};

struct DisplaySelection {
  std::vector<CommittedFrame> shown;     // bottom to top
  std::vector<CommittedFrame> released;  // frames the scheduler let go of (their images are free)
  // A visible client has a frame committed for a later vsync: the display has something to show
  // soon even where `shown` is empty.
  bool framesQueued = false;
  // The bottom frame's (the primary's): how the display blends with the environment; none when
  // nothing is shown (the display's preferred mode then).
  std::optional<EnvironmentBlendMode> environmentBlendMode() const {
    if (shown.empty()) return std::nullopt;
    return shown.front().environmentBlendMode;
  }
};

class DisplayFeed {
 public:
  virtual ~DisplayFeed() = default;
  // A client's frame is complete. Returns the frames this one supersedes or that cannot be shown
  // (hidden client, unknown client).
  virtual std::vector<CommittedFrame> commit(CommittedFrame frame, int64_t nowNs) = 0;
  // The client left: its frames are returned for release.
  virtual std::vector<CommittedFrame> removeClient(uint32_t clientId) = 0;
  // The display frame of vsync `vsyncNs`: per visible client, the newest frame whose target time
  // is due (frames are never shown before their time).
  virtual DisplaySelection select(int64_t vsyncNs, int64_t periodNs) = 0;
  // The display loop finished that frame in `workNs` of wall time, having begun it `wakeDelayNs`
  // after its vsync (a loop paced by its own timer; none where a runtime paces it).
  virtual void displayed(int64_t workNs, std::optional<int64_t> wakeDelayNs = std::nullopt) = 0;
  // What the display itself allows (a backend whose own session the runtime hid or unfocused):
  // every client's visibility is capped by it.
  virtual void setSystemVisibility(Visibility system) = 0;
};

}  // namespace xrc
