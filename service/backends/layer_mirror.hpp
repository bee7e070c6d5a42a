// A mirror of what a pass-through backend (openxr) sends its runtime. Such a backend hands each
// display frame's layers over uncomposed, and may not read the runtime's images once released,
// so where a mirror is wanted it copies each released runtime image into a composable image of
// its own (RuntimeSwapchain::mirrorCopy) and tells the mirror what each frame showed. The mirror
// composes and presents those on its own thread, at its own pace: the backend never waits for it.
#pragma once

#include <optional>
#include <vector>

#include "../present/display_presenter.hpp"
#include "backend.hpp"
#include "xrc/pose.hpp"

namespace xrc {

class LayerMirror {
 public:
  virtual ~LayerMirror() = default;
  // The backend's display thread, after each frame it handed its runtime: the client frames it
  // sent (their layers' mirror copies submitted already, on the runtime's queue) and the head pose
  // at their display time. Never waits.
  virtual void sent(std::vector<CommittedFrame> frames, const Pose& head) = 0;
  // Any thread: the mirror window's state.
  virtual std::optional<present::PresenterStats> windowStats() const = 0;
};

}  // namespace xrc
