// The mirror of a pass-through backend (--backend openxr --mirror window): composes what the
// backend sent its runtime with the display core's layer renderer, from the backend's mirror
// copies (RuntimeSwapchain::mirrorCopy), into an image of its own, and presents that in the
// window. It runs on its own thread, taking only the newest frame the backend sent: a slow window
// never slows the backend, and a frame the mirror had no time for is skipped.
#pragma once

#include <condition_variable>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "../backends/layer_mirror.hpp"
#include "../gpu/gpu_device.hpp"
#include "../gpu/serial_submitter.hpp"
#include "layer_renderer.hpp"
#include "output.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc::display {

class MirrorCompositor final : public LayerMirror {
 public:
  // The backend's views side by side; `presenter` (the window) outlives the compositor.
  static Result<std::unique_ptr<MirrorCompositor>> create(gpu::GpuDevice& gpu, const std::vector<ViewInfo>& views,
                                                          present::DisplayPresenter& presenter);
  MirrorCompositor(gpu::GpuDevice& gpu, present::DisplayPresenter& presenter);
  ~MirrorCompositor() override;  // stop()

  void start();
  // Joins the thread, waits (bounded) for its last composition and the window's last present.
  void stop() XRC_EXCLUDES(mutex_);

  void sent(std::vector<CommittedFrame> frames, const Pose& head) override XRC_EXCLUDES(mutex_);
  std::optional<present::PresenterStats> windowStats() const override { return presenter_.stats(); }
  // Any thread: compositions submitted so far.
  uint64_t compositions() const { return compositions_.load(); }

 private:
  Status init(const std::vector<ViewInfo>& views);
  void run() XRC_EXCLUDES(mutex_);  // mirror thread
  // Mirror thread: composes `frames` at `head` and presents the result.
  Status compose(std::vector<CommittedFrame> frames, const Pose& head);
  void present();

  gpu::GpuDevice& gpu_;
  present::DisplayPresenter& presenter_;
  std::atomic<uint64_t> compositions_{0};

  // Mirror thread only (after init()).
  OwnedOutputImage image_;
  std::unique_ptr<gpu::SerialSubmitter> submitter_;
  std::optional<LayerRenderer> renderer_;
  std::vector<CommittedFrame> inFlight_;  // read by the submission in flight: their swapchains stay
  bool composed_ = false;

  Mutex mutex_;
  std::condition_variable_any wake_;
  std::optional<std::pair<std::vector<CommittedFrame>, Pose>> newest_ XRC_GUARDED_BY(mutex_);
  bool stopping_ XRC_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace xrc::display
