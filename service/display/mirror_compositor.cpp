#include "mirror_compositor.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <iterator>

#include "../gpu/composable_image.hpp"
#include "../log.hpp"

namespace xrc::display {

namespace {
// With nothing new to compose the window is still presented now and then: it follows resizes
// and close requests.
constexpr auto kIdlePresent = std::chrono::milliseconds(100);
}  // namespace

Result<std::unique_ptr<MirrorCompositor>> MirrorCompositor::create(gpu::GpuDevice& gpu,
                                                                   const std::vector<ViewInfo>& views,
                                                                   present::DisplayPresenter& presenter) {
  auto mirror = std::make_unique<MirrorCompositor>(gpu, presenter);
  if (auto s = mirror->init(views); !s) return s.error();
  return mirror;
}

MirrorCompositor::MirrorCompositor(gpu::GpuDevice& gpu, present::DisplayPresenter& presenter)
    : gpu_(gpu), presenter_(presenter) {}

MirrorCompositor::~MirrorCompositor() { stop(); }

Status MirrorCompositor::init(const std::vector<ViewInfo>& views) {
  if (views.empty() || views[0].recommendedWidth == 0 || views[0].recommendedHeight == 0) {
    return makeError(ErrorCode::invalidArgument, "the mirror needs the display's views and their sizes");
  }
  DisplayLayout layout;
  layout.views = views;
  layout.viewWidth = views[0].recommendedWidth;
  layout.viewHeight = views[0].recommendedHeight;
  // The runtime shows each layer at the pose the client rendered it for, or reprojects it
  // itself: the mirror draws what was sent.
  layout.reprojection = false;
  auto image = createOutputImage(gpu_, layout.viewWidth * uint32_t(views.size()), layout.viewHeight);
  if (!image) return image.error();
  image_ = std::move(image).value();
  auto submitter = gpu::SerialSubmitter::create(gpu_, gpu_.graphicsQueue(), "mirror composition");
  if (!submitter) return submitter.error();
  submitter_ = std::move(submitter).value();
  auto renderer = LayerRenderer::create(gpu_.device(), image_.image.get(), image_.view.get(), std::move(layout),
                                        [](const LayerView& view) {
                                          const gpu::ComposableImage* copy = view.swapchain->mirrorCopy();
                                          if (copy == nullptr) return SourceImage{};
                                          return SourceImage{copy->image.get(), copy->view.get(), copy->info.format};
                                        });
  if (!renderer) return renderer.error();
  renderer_.emplace(std::move(renderer).value());
  return {};
}

void MirrorCompositor::start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "xrc-mirror");
    run();
  });
}

void MirrorCompositor::stop() {
  if (!thread_.joinable()) return;
  {
    Lock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (auto s = submitter_->waitSubmitted(); !s) log::error("mirror shutdown: {}", s.error().describe());
  inFlight_.clear();
  {
    Lock lock(mutex_);
    newest_.reset();  // its frames keep the backend's swapchains
  }
  presenter_.finish();
}

void MirrorCompositor::sent(std::vector<CommittedFrame> frames, const Pose& head) {
  {
    Lock lock(mutex_);
    newest_.emplace(std::move(frames), head);  // an older one not yet composed is skipped
  }
  wake_.notify_all();
}

void MirrorCompositor::run() {
  for (;;) {
    std::optional<std::pair<std::vector<CommittedFrame>, Pose>> next;
    {
      Lock lock(mutex_);
      wake_.wait_for(lock.native(), kIdlePresent, [&] { return stopping_ || newest_.has_value(); });
      if (stopping_) return;
      next.swap(newest_);
    }
    // Once the window is closed there is nothing to compose for.
    if (!presenter_.stats().open) continue;
    if (next) {
      if (auto s = compose(std::move(next->first), next->second); !s) {
        log::error("mirror composition failed: {}", s.error().describe());
        continue;
      }
    }
    if (composed_) present();
  }
}

Status MirrorCompositor::compose(std::vector<CommittedFrame> frames, const Pose& head) {
  // The submission before this one (a frame ago) must be done before the renderer re-records.
  if (auto s = submitter_->waitSubmitted(); !s) return s;
  inFlight_.clear();
  // Layers without a mirror copy (none should be: every runtime swapchain gets one) are left out.
  for (auto& frame : frames) {
    auto unmirrored = [](const CommittedLayer& layer) {
      return std::any_of(layer.views.begin(), layer.views.end(),
                         [](const LayerView& view) { return view.swapchain->mirrorCopy() == nullptr; });
    };
    if (std::none_of(frame.layers.begin(), frame.layers.end(), unmirrored)) continue;
    std::vector<CommittedLayer> kept;
    std::copy_if(frame.layers.begin(), frame.layers.end(), std::back_inserter(kept),
                 [&](const CommittedLayer& layer) { return !unmirrored(layer); });
    frame.layers = SharedLayers(std::move(kept));
  }
  Composition composition = renderer_->plan(frames, head);
  if (auto s = renderer_->beginFrame(); !s) return s;
  Status recordStatus;
  auto record = [&](VkCommandBuffer cb) {
    // The mirror copies were written by earlier submissions on this queue (the backend's, after
    // each copy into a runtime image): everything before this point in submission order is made
    // visible to the composition.
    VkMemoryBarrier visible{};
    visible.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    visible.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    visible.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &visible, 0,
                         nullptr, 0, nullptr);
    renderer_->record(cb, frames, composition, recordStatus);
  };
  auto value = submitter_->submit({}, record);
  if (!value) return value.error();
  if (!recordStatus) log::error("mirror composition: {}", recordStatus.error().describe());
  inFlight_ = std::move(frames);
  composed_ = true;
  compositions_++;
  return {};
}

void MirrorCompositor::present() {
  const OutputImage target = image_.get();
  presenter_.present({target.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, target.width, target.height,
                      submitter_->timeline().get(), submitter_->lastValue()});
}

}  // namespace xrc::display
