// Timeline mode's copies of one endFrame (RenderedFrameCopies), with real copies on a Vulkan device
// (lavapipe in CI, host-mode swapchains): nothing goes to the queue before the frame's last
// release is handled, then all its copies in one submission, settled in the order they were
// added; a release handled without a copy, a copy submitted early, and a frame dropped with a
// copy held each leave no copy unsubmitted. And the copies of a let-go (LetGoCopies): frames of
// several clients handed over while it gathers are submitted together once the event loop has
// run everything else, each client counted once, in the order they were handed over.
#include <gtest/gtest.h>
#include <kj/async.h>

#include <chrono>
#include <memory>
#include <vector>

#include "compositor/client_registry.hpp"
#include "gpu/composable_image.hpp"
#include "gpu/gpu_device.hpp"
#include "gpu/shared_swapchain.hpp"
#include "gpu/timeline.hpp"
#include "rpc/end_frame_copies.hpp"

namespace xrc {
namespace {

using namespace std::chrono_literals;

// More copies than any test gathers: one submission per let-go.
constexpr uint32_t kEnough = 64;

class RenderedFrameCopiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gpu = gpu::GpuDevice::create(gpu::DeviceOptions{});
    ASSERT_TRUE(gpu) << gpu.error().describe();
    gpu_ = std::move(gpu).value();
    auto timeline = gpu::Timeline::create(gpu_->device());
    ASSERT_TRUE(timeline) << timeline.error().describe();
    copyTimeline_ = std::move(timeline).value();
    VkImageCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = VK_FORMAT_R8G8B8A8_UNORM;
    info.extent = {16, 16, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage =
        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    // Two swapchains of one image each, as a client with a swapchain per view has.
    for (int i = 0; i < 2; ++i) {
      std::vector<gpu::ExportedImage> exported;
      gpu::ExportedTimelines timelines;
      auto swapchain =
          gpu::SharedSwapchain::create(*gpu_, *copyTimeline_, info, 1, SyncMode::host, exported, timelines);
      ASSERT_TRUE(swapchain) << swapchain.error().describe();
      swapchains_.push_back(std::move(swapchain).value());
      auto destination = gpu::createComposableImage(*gpu_, info, "test runtime image");
      ASSERT_TRUE(destination) << destination.error().describe();
      destinations_.push_back(std::move(destination).value());
    }
    client_ = std::make_shared<ClientRecord>();
  }

  void TearDown() override {
    for (auto& swapchain : swapchains_) EXPECT_TRUE(swapchain->waitIdle(2000ms));
  }

  // The copy of swapchain `which`'s image into its runtime image, recorded and not submitted.
  gpu::PreparedCopy prepare(size_t which) {
    RuntimeImageLease lease;
    lease.image = destinations_[which].image.get();
    auto prepared = swapchains_[which]->prepareCopy(0, lease, 2000ms);
    EXPECT_TRUE(prepared) << prepared.error().describe();
    return std::move(prepared).value();
  }

  // Settles a copy by noting the copy timeline value it signals.
  EndFrameCopies::Settle noteValue() {
    return [this](Result<gpu::CopyResult> copy) -> Status {
      EXPECT_TRUE(copy) << copy.error().describe();
      if (copy) values_.push_back(copy.value().copyValue);
      return Status{};
    };
  }

  uint64_t submissions() const { return client_->copySubmissions.load(); }

  // Held by pointer: KJ's loop may throw from its destructor, gtest's fixtures may not.
  std::unique_ptr<kj::EventLoop> loop_ = std::make_unique<kj::EventLoop>();
  std::unique_ptr<kj::WaitScope> scope_ = std::make_unique<kj::WaitScope>(*loop_);
  kj::WaitScope& waitScope_ = *scope_;
  std::unique_ptr<gpu::GpuDevice> gpu_;
  std::unique_ptr<gpu::Timeline> copyTimeline_;
  std::vector<std::unique_ptr<gpu::SharedSwapchain>> swapchains_;
  std::vector<gpu::ComposableImage> destinations_;
  std::shared_ptr<ClientRecord> client_;
  std::vector<uint64_t> values_;
};

TEST_F(RenderedFrameCopiesTest, TheFramesCopiesGoInOneSubmissionOnceItsLastReleaseIsHandled) {
  RenderedFrameCopies frame(client_);
  frame.expect();  // the endFrame handler, while it adds the frame's releases
  frame.expect();
  frame.expect();
  frame.handled();  // the handler is done: two releases to go

  auto first = frame.copies().add(prepare(0), noteValue(), client_->copySubmissions);
  frame.handled();
  EXPECT_FALSE(first.poll(waitScope_)) << "submitted before the frame's last release";
  EXPECT_EQ(submissions(), 0u);

  auto second = frame.copies().add(prepare(1), noteValue(), client_->copySubmissions);
  frame.handled();
  EXPECT_EQ(submissions(), 1u);
  ASSERT_TRUE(first.poll(waitScope_));
  EXPECT_TRUE(first.wait(waitScope_));
  EXPECT_TRUE(second.wait(waitScope_));
  ASSERT_EQ(values_.size(), 2u);
  EXPECT_LT(values_[0], values_[1]) << "settled out of the order the copies were added";
  EXPECT_TRUE(copyTimeline_->wait(values_[1], 2'000'000'000));
}

TEST_F(RenderedFrameCopiesTest, AReleaseHandledWithoutACopyStillLetsTheLastSubmit) {
  RenderedFrameCopies frame(client_);
  frame.expect();
  frame.expect();
  frame.expect();
  frame.handled();
  frame.handled();  // say its rendering never finished: settled without a copy
  auto copied = frame.copies().add(prepare(1), noteValue(), client_->copySubmissions);
  EXPECT_FALSE(copied.poll(waitScope_));
  frame.handled();
  EXPECT_EQ(submissions(), 1u);
  EXPECT_TRUE(copied.wait(waitScope_));
  EXPECT_EQ(values_.size(), 1u);
}

TEST_F(RenderedFrameCopiesTest, ACopySubmittedEarlyLeavesTheRestToTheLastRelease) {
  RenderedFrameCopies frame(client_);
  frame.expect();
  frame.expect();
  frame.expect();
  frame.handled();
  auto first = frame.copies().add(prepare(0), noteValue(), client_->copySubmissions);
  frame.handled();
  // What a destroyed swapchain's copy gets (SessionState::submitFrameCopiesHolding).
  ASSERT_TRUE(frame.copies().holds(swapchains_[0].get()));
  frame.copies().submit();
  EXPECT_EQ(submissions(), 1u);
  EXPECT_TRUE(first.wait(waitScope_));
  EXPECT_FALSE(frame.copies().holds(swapchains_[0].get()));

  auto second = frame.copies().add(prepare(1), noteValue(), client_->copySubmissions);
  frame.handled();
  EXPECT_EQ(submissions(), 2u);
  EXPECT_TRUE(second.wait(waitScope_));
  ASSERT_EQ(values_.size(), 2u);
  EXPECT_LT(values_[0], values_[1]);
}

TEST_F(RenderedFrameCopiesTest, AFrameDroppedWithACopyHeldSubmitsIt) {
  kj::Promise<Status> held = nullptr;
  {
    RenderedFrameCopies frame(client_);
    frame.expect();
    frame.expect();
    frame.expect();
    frame.handled();
    held = frame.copies().add(prepare(0), noteValue(), client_->copySubmissions);
    frame.handled();
    EXPECT_EQ(submissions(), 0u);
    // Its session went away before the frame's other release was handled.
  }
  EXPECT_EQ(submissions(), 1u);
  EXPECT_TRUE(held.wait(waitScope_));
  EXPECT_EQ(values_.size(), 1u);
}

TEST_F(RenderedFrameCopiesTest, FramesOfTwoClientsHandedOverAtALetGoAreSubmittedTogetherOnceTheLoopIsIdle) {
  LetGoCopies letGo(kEnough);
  auto other = std::make_shared<ClientRecord>();
  letGo.gatherUntilQueueEmpty();
  ASSERT_TRUE(letGo.gathering());
  // A frame of two releases (this client's), handed over when its last is handled...
  RenderedFrameCopies frame(client_, &letGo);
  frame.expect();  // the endFrame handler, while it adds the frame's releases
  frame.expect();
  frame.expect();
  frame.handled();
  frame.handled();  // one release without a copy
  auto first = frame.copies().add(prepare(0), noteValue(), client_->copySubmissions);
  frame.handled();
  EXPECT_TRUE(frame.copies().empty()) << "the frame kept its copies during a let-go";
  // ...and a frame of one release (the other client's), added to the let-go's copies directly.
  auto second = letGo.copies().add(prepare(1), noteValue(), other->copySubmissions);
  auto submitted = letGo.submitted();
  EXPECT_TRUE(letGo.copies().holds(swapchains_[0].get()));
  EXPECT_TRUE(letGo.copies().holds(swapchains_[1].get()));
  EXPECT_EQ(submissions(), 0u) << "submitted while the let-go still gathers";
  EXPECT_TRUE(values_.empty());

  submitted.wait(waitScope_);  // the loop runs dry: the gathering ends
  EXPECT_FALSE(letGo.gathering());
  EXPECT_EQ(submissions(), 1u);
  EXPECT_EQ(other->copySubmissions.load(), 1u);
  EXPECT_TRUE(first.wait(waitScope_));
  EXPECT_TRUE(second.wait(waitScope_));
  ASSERT_EQ(values_.size(), 2u);
  EXPECT_EQ(values_[1], values_[0] + 1) << "not taken in one submission, in the order handed over";
  EXPECT_TRUE(copyTimeline_->wait(values_[1], 2'000'000'000));
}

TEST_F(RenderedFrameCopiesTest, AFrameHandledOutsideALetGoSubmitsOnItsOwn) {
  LetGoCopies letGo(kEnough);
  RenderedFrameCopies frame(client_, &letGo);
  frame.expect();
  auto copied = frame.copies().add(prepare(0), noteValue(), client_->copySubmissions);
  frame.handled();
  EXPECT_EQ(submissions(), 1u);
  EXPECT_TRUE(copied.wait(waitScope_));
  EXPECT_TRUE(letGo.copies().empty());
  auto submitted = letGo.submitted();
  EXPECT_TRUE(submitted.poll(waitScope_)) << "a let-go that is not gathering has nothing to wait for";
}

TEST_F(RenderedFrameCopiesTest, ALetGoDroppedWhileGatheringSubmitsWhatItGathered) {
  kj::Promise<Status> held = nullptr;
  {
    LetGoCopies letGo(kEnough);
    letGo.gatherUntilQueueEmpty();
    held = letGo.copies().add(prepare(0), noteValue(), client_->copySubmissions);
    EXPECT_EQ(submissions(), 0u);
  }
  EXPECT_EQ(submissions(), 1u);
  EXPECT_TRUE(held.wait(waitScope_));
  EXPECT_EQ(values_.size(), 1u);
}

TEST_F(RenderedFrameCopiesTest, ALetGoSubmitsOnceItHasGatheredItsCopiesPerSubmission) {
  LetGoCopies letGo(1);
  auto other = std::make_shared<ClientRecord>();
  letGo.gatherUntilQueueEmpty();
  auto first = letGo.copies().add(prepare(0), noteValue(), client_->copySubmissions);
  auto firstSubmitted = letGo.submitted();
  EXPECT_EQ(submissions(), 1u) << "a full submission waited for the let-go's end";
  EXPECT_TRUE(letGo.gathering()) << "the let-go stopped gathering at its first submission";
  EXPECT_TRUE(firstSubmitted.poll(waitScope_)) << "a frame whose copies went still waits";
  auto second = letGo.copies().add(prepare(1), noteValue(), other->copySubmissions);
  auto secondSubmitted = letGo.submitted();
  EXPECT_EQ(other->copySubmissions.load(), 1u) << "the second copy waited for the let-go's end";
  EXPECT_EQ(submissions(), 1u) << "the first client counted in the second's submission";
  secondSubmitted.wait(waitScope_);
  EXPECT_TRUE(first.wait(waitScope_));
  EXPECT_TRUE(second.wait(waitScope_));
  ASSERT_EQ(values_.size(), 2u);
  EXPECT_TRUE(copyTimeline_->wait(values_[1], 2'000'000'000));
}

TEST_F(RenderedFrameCopiesTest, ALetGoOfNoCopiesPerSubmissionGathersNothing) {
  LetGoCopies letGo(0);
  letGo.gatherUntilQueueEmpty();
  EXPECT_FALSE(letGo.gathering());
}

}  // namespace
}  // namespace xrc
