// Pure protocol logic: negotiation, swapchain request validation, the per-image cycle, layers.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <vector>

#include "xrc/protocol_rules.hpp"

namespace xrc {
namespace {

// The validators take spans: a list written in place, held for the call.
std::vector<float> floats(std::initializer_list<float> values) { return values; }

DeviceFacts device(uint8_t id, bool semaphores) {
  DeviceFacts f;
  f.deviceUuid.fill(id);
  f.driverUuid.fill(uint8_t(id + 1));
  f.name = "gpu" + std::to_string(id);
  f.externalSemaphoreFd = semaphores;
  return f;
}

NegotiationInput input(bool clientSem, bool daemonSem) {
  NegotiationInput in;
  in.clientMajor = kProtocolMajor;
  in.clientMinor = kProtocolMinor;
  in.client = device(1, clientSem);
  in.daemon = device(1, daemonSem);
  return in;
}

// binary puts a wait on the client's semaphore into the daemon's queue: only an operator who
// trusts the clients asks for it.
TEST(Negotiation, BinaryOnlyWhenForcedAndBothSidesHaveExternalSemaphores) {
  EXPECT_EQ(negotiate(input(true, true)).value(), SyncMode::host);
  for (bool clientSem : {false, true}) {
    for (bool daemonSem : {false, true}) {
      auto in = input(clientSem, daemonSem);
      in.forcedMode = SyncMode::binary;
      EXPECT_EQ(negotiate(in).ok(), clientSem && daemonSem) << clientSem << daemonSem;
    }
  }
}

TEST(EnvironmentBlendModes, ParsedInOrderOnceEachAndChecked) {
  auto modes = parseBlendModes("additive,opaque");
  ASSERT_TRUE(modes) << modes.error().message;
  EXPECT_EQ(modes.value(),
            (std::vector<EnvironmentBlendMode>{EnvironmentBlendMode::additive, EnvironmentBlendMode::opaque}));
  EXPECT_EQ(parseBlendModes("alpha_blend").value(),
            std::vector<EnvironmentBlendMode>{EnvironmentBlendMode::alphaBlend});
  for (const char* bad : {"", "opaque,", "opaque,opaque", "Opaque", "opaque additive"}) {
    EXPECT_FALSE(parseBlendModes(bad)) << bad;
  }
  EXPECT_NE(parseBlendModes("opaque,opaque").error().message.find("given twice"), std::string::npos);

  EXPECT_TRUE(blendModeSupported(modes.value(), EnvironmentBlendMode::additive));
  EXPECT_FALSE(blendModeSupported(modes.value(), EnvironmentBlendMode::alphaBlend));
  EXPECT_FALSE(blendModeSupported(modes.value(), EnvironmentBlendMode(0)));  // XR_ENVIRONMENT_BLEND_MODE_MAX etc.
  // A daemon before protocol 1.3 lists none: opaque only.
  EXPECT_TRUE(blendModeSupported({}, EnvironmentBlendMode::opaque));
  EXPECT_FALSE(blendModeSupported({}, EnvironmentBlendMode::additive));
}

TEST(Negotiation, MajorVersionMustMatchMinorMayDiffer) {
  auto in = input(false, false);
  in.clientMinor = kProtocolMinor + 5;
  EXPECT_TRUE(negotiate(in).ok());
  in.clientMajor = kProtocolMajor + 1;
  auto r = negotiate(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::versionMismatch);
  EXPECT_NE(r.error().message.find("major"), std::string::npos);
}

TEST(Negotiation, DeviceOrDriverMismatchIsAClearError) {
  auto in = input(true, true);
  in.client.deviceUuid[3] ^= 1;
  auto r = negotiate(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::deviceMismatch);
  EXPECT_NE(r.error().message.find(uuidToString(in.daemon.deviceUuid)), std::string::npos);
  in = input(true, true);
  in.client.driverUuid[0] ^= 1;
  EXPECT_EQ(negotiate(in).error().code, ErrorCode::deviceMismatch);
}

NegotiationInput timelineInput(bool clientTimeline, bool daemonTimeline) {
  auto in = input(true, true);
  in.client.timelineSemaphoreFd = clientTimeline;
  in.daemon.timelineSemaphoreFd = daemonTimeline;
  return in;
}

TEST(Negotiation, TimelineWhereBothSidesShareTimelinesAndTheClientSpeaks1_11) {
  EXPECT_EQ(negotiate(timelineInput(true, true)).value(), SyncMode::timeline);
  // Without timelines on both sides, the client waits for its own rendering (host), never the
  // daemon's queue (binary).
  EXPECT_EQ(negotiate(timelineInput(true, false)).value(), SyncMode::host);
  EXPECT_EQ(negotiate(timelineInput(false, true)).value(), SyncMode::host);
  auto older = timelineInput(true, true);
  older.clientMinor = 10;  // knows no release values
  EXPECT_EQ(negotiate(older).value(), SyncMode::host);
}

TEST(Negotiation, ForcedTimelineNamesWhatIsMissing) {
  auto in = timelineInput(true, true);
  in.forcedMode = SyncMode::binary;
  EXPECT_EQ(negotiate(in).value(), SyncMode::binary);
  in.forcedMode = SyncMode::timeline;
  EXPECT_EQ(negotiate(in).value(), SyncMode::timeline);

  in = timelineInput(false, true);
  in.forcedMode = SyncMode::timeline;
  auto r = negotiate(in);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::unsupported);
  EXPECT_NE(r.error().message.find("client's device"), std::string::npos) << r.error().message;

  in = timelineInput(true, true);
  in.clientMinor = 10;
  in.forcedMode = SyncMode::timeline;
  r = negotiate(in);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("1.11"), std::string::npos) << r.error().message;
}

TEST(SyncModes, NamesRoundTrip) {
  for (SyncMode mode : {SyncMode::host, SyncMode::binary, SyncMode::timeline}) {
    EXPECT_EQ(parseSyncMode(syncModeName(mode)), mode);
  }
  EXPECT_FALSE(parseSyncMode("auto"));
  EXPECT_FALSE(parseSyncMode("Timeline"));
}

TEST(RenderingValues, RiseAboveThePreviousRelease) {
  EXPECT_TRUE(checkRenderingValue(0, 1));
  EXPECT_TRUE(checkRenderingValue(5, 100));
  EXPECT_EQ(checkRenderingValue(0, 0).error().code, ErrorCode::invalidArgument);
  EXPECT_FALSE(checkRenderingValue(7, 7));
  EXPECT_FALSE(checkRenderingValue(7, 3));
  EXPECT_FALSE(checkRenderingValue(UINT64_MAX, UINT64_MAX));
}

TEST(Negotiation, ForcedModes) {
  auto in = input(true, true);
  in.forcedMode = SyncMode::host;
  EXPECT_EQ(negotiate(in).value(), SyncMode::host);
  in = input(false, true);
  in.forcedMode = SyncMode::binary;
  EXPECT_EQ(negotiate(in).error().code, ErrorCode::unsupported);
}

SwapchainLimits limits() {
  SwapchainLimits l;
  l.formats = {43 /*R8G8B8A8_SRGB*/, 126 /*D32_SFLOAT*/};
  l.depthFormats = {126};
  return l;
}

SwapchainRequest colorRequest() {
  SwapchainRequest r;
  r.usageFlags = xr_usage::colorAttachment | xr_usage::sampled;
  r.format = 43;
  r.width = 1440;
  r.height = 1600;
  r.arraySize = 2;
  r.mipCount = 1;
  return r;
}

ErrorCode codeOf(const SwapchainRequest& r) {
  auto s = validateSwapchainRequest(r, limits());
  return s ? ErrorCode::none : s.error().code;
}

TEST(SwapchainValidation, AcceptsAWellFormedRequest) { EXPECT_EQ(codeOf(colorRequest()), ErrorCode::none); }

TEST(SwapchainValidation, RejectsBadExtentsCountsAndFormats) {
  auto r = colorRequest();
  r.width = 0;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r = colorRequest();
  r.height = kMaxExtent + 1;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r = colorRequest();
  r.format = 37;
  EXPECT_EQ(codeOf(r), ErrorCode::unsupported);
  r = colorRequest();
  r.arraySize = 0;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r.arraySize = 1000000;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r = colorRequest();
  r.mipCount = 12;  // 1600 allows 11 levels
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r.mipCount = 11;
  EXPECT_EQ(codeOf(r), ErrorCode::none);
  r.mipCount = 0;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r = colorRequest();
  r.sampleCount = 4;
  EXPECT_EQ(codeOf(r), ErrorCode::unsupported);
  r = colorRequest();
  r.faceCount = 6;  // a cube map must be square
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r.height = r.width;
  EXPECT_EQ(codeOf(r), ErrorCode::none);
  r.arraySize = 3;  // 18 image layers: more than the 16 a swapchain may have
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r.arraySize = 1;
  r.faceCount = 3;
  EXPECT_EQ(codeOf(r), ErrorCode::unsupported);
  r = colorRequest();
  r.createFlags = swapchain_flags::staticImage;
  EXPECT_EQ(codeOf(r), ErrorCode::none);
  r = colorRequest();
  r.usageFlags |= 1ull << 40;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);
  r = colorRequest();
  r.createFlags = 1;
  EXPECT_EQ(codeOf(r), ErrorCode::unsupported);
}

TEST(SwapchainValidation, UsageMustFitTheFormatKind) {
  auto r = colorRequest();
  r.format = 126;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);  // depth format with color usage
  r.usageFlags = xr_usage::depthStencilAttachment;
  EXPECT_EQ(codeOf(r), ErrorCode::none);
  r.format = 43;
  EXPECT_EQ(codeOf(r), ErrorCode::invalidArgument);  // color format with depth usage
}

TEST(ImageCycle, FollowsAcquireWaitReleaseRoundRobin) {
  ImageCycle cycle(3);
  for (uint32_t round = 0; round < 2; ++round) {
    for (uint32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(cycle.nextAcquireIndex(), i);
      ASSERT_TRUE(cycle.acquire(i).ok());
      ASSERT_TRUE(cycle.wait(i).ok());
      ASSERT_TRUE(cycle.release(i).ok());
      EXPECT_EQ(cycle.state(i), ImageCycle::State::copying);
      ASSERT_TRUE(cycle.copyDone(i).ok());
    }
  }
}

TEST(ImageCycle, RejectsEveryOutOfOrderCall) {
  ImageCycle cycle(3);
  EXPECT_EQ(cycle.acquire(7).error().code, ErrorCode::invalidArgument);  // out of range
  EXPECT_EQ(cycle.release(0).error().code, ErrorCode::callOrder);        // release without acquire
  EXPECT_EQ(cycle.wait(0).error().code, ErrorCode::callOrder);           // wait without acquire
  EXPECT_EQ(cycle.acquire(1).error().code, ErrorCode::callOrder);        // not the next image
  ASSERT_TRUE(cycle.acquire(0).ok());
  EXPECT_EQ(cycle.release(0).error().code, ErrorCode::callOrder);  // acquired but not waited
  ASSERT_TRUE(cycle.wait(0).ok());
  EXPECT_EQ(cycle.wait(0).error().code, ErrorCode::callOrder);  // double wait
  ASSERT_TRUE(cycle.release(0).ok());
  EXPECT_EQ(cycle.release(0).error().code, ErrorCode::callOrder);  // double release
  EXPECT_EQ(cycle.state(0), ImageCycle::State::copying);
}

TEST(ImageCycle, OneStepAcquireWaitReleaseFollowsTheSameRules) {
  ImageCycle cycle(3);
  EXPECT_EQ(cycle.acquireWaitRelease(1).error().code, ErrorCode::callOrder);  // not the next image
  EXPECT_EQ(cycle.acquireWaitRelease(9).error().code, ErrorCode::invalidArgument);
  EXPECT_EQ(cycle.state(1), ImageCycle::State::free);
  EXPECT_EQ(cycle.nextAcquireIndex(), 0u);
  ASSERT_TRUE(cycle.acquireWaitRelease(0).ok());
  EXPECT_EQ(cycle.state(0), ImageCycle::State::copying);
  EXPECT_EQ(cycle.nextAcquireIndex(), 1u);
  // An image acquired by a separate call must be released first (acquire order); nothing changes.
  ASSERT_TRUE(cycle.acquire(1).ok());
  auto s = cycle.acquireWaitRelease(2);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::callOrder) << s.error().message;
  EXPECT_EQ(cycle.state(2), ImageCycle::State::free);
  EXPECT_EQ(cycle.nextAcquireIndex(), 2u);
  ASSERT_TRUE(cycle.wait(1).ok());
  ASSERT_TRUE(cycle.release(1).ok());
  ASSERT_TRUE(cycle.acquireWaitRelease(2).ok());
  // Image 0 is still being copied: reusing it in one step is refused like a separate acquire.
  EXPECT_EQ(cycle.acquireWaitRelease(0).error().code, ErrorCode::callOrder);
  ASSERT_TRUE(cycle.copyDone(0).ok());
  ASSERT_TRUE(cycle.acquireWaitRelease(0).ok());
}

TEST(ImageCycle, AcquireBeyondImageCountIsExhausted) {
  ImageCycle cycle(2);
  ASSERT_TRUE(cycle.acquire(0).ok());
  ASSERT_TRUE(cycle.acquire(1).ok());
  auto s = cycle.acquire(0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::exhausted);
}

TEST(ImageCycle, WaitAndReleaseFollowAcquireOrder) {
  ImageCycle cycle(3);
  ASSERT_TRUE(cycle.acquire(0).ok());
  ASSERT_TRUE(cycle.acquire(1).ok());
  EXPECT_EQ(cycle.wait(1).error().code, ErrorCode::callOrder);
  ASSERT_TRUE(cycle.wait(0).ok());
  ASSERT_TRUE(cycle.wait(1).ok());
  EXPECT_EQ(cycle.release(1).error().code, ErrorCode::callOrder);
  ASSERT_TRUE(cycle.release(0).ok());
  ASSERT_TRUE(cycle.release(1).ok());
}

TEST(ImageCycle, ReacquireBeforeCopyAnswerIsRejected) {
  ImageCycle cycle(1);
  ASSERT_TRUE(cycle.acquire(0).ok());
  ASSERT_TRUE(cycle.wait(0).ok());
  ASSERT_TRUE(cycle.release(0).ok());
  EXPECT_EQ(cycle.acquire(0).error().code, ErrorCode::callOrder);
  ASSERT_TRUE(cycle.copyDone(0).ok());
  EXPECT_TRUE(cycle.acquire(0).ok());
}

TEST(Layers, SubImageMustNameAReleasedSwapchainOfTheSessionWithinBounds) {
  SwapchainFacts facts{256, 128, 2, false, true};
  SubImageRef ref{4, 0, 0, 256, 128, 1};
  EXPECT_TRUE(validateSubImage(ref, &facts, false, "view").ok());
  EXPECT_EQ(validateSubImage(ref, nullptr, false, "view").error().code, ErrorCode::notFound);
  EXPECT_EQ(validateSubImage(ref, &facts, true, "depth").error().code, ErrorCode::invalidArgument);
  ref.arrayIndex = 2;
  EXPECT_EQ(validateSubImage(ref, &facts, false, "view").error().code, ErrorCode::invalidArgument);
  ref = {4, 10, 0, 256, 128, 0};
  EXPECT_EQ(validateSubImage(ref, &facts, false, "view").error().code, ErrorCode::invalidArgument);
  ref = {4, 0, 0, 0, 128, 0};
  EXPECT_EQ(validateSubImage(ref, &facts, false, "view").error().code, ErrorCode::invalidArgument);
  SwapchainFacts cube = facts;
  cube.faceCount = 6;  // only cube layers may use a cube map, and they only cube maps
  ref = {4, 0, 0, 256, 128, 0};
  EXPECT_EQ(validateSubImage(ref, &cube, false, "quad").error().code, ErrorCode::invalidArgument);
  EXPECT_TRUE(validateSubImage(ref, &cube, false, "cube", /*wantCube=*/true).ok());
  EXPECT_EQ(validateSubImage(ref, &facts, false, "cube", /*wantCube=*/true).error().code, ErrorCode::invalidArgument);
  ref = {4, -1, 0, 16, 16, 0};
  EXPECT_EQ(validateSubImage(ref, &facts, false, "view").error().code, ErrorCode::invalidArgument);
  facts.hasContent = false;
  ref = {4, 0, 0, 16, 16, 0};
  EXPECT_EQ(validateSubImage(ref, &facts, false, "view").error().code, ErrorCode::callOrder);
}

TEST(Layers, QuadSizeAndPose) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(validateQuadExtent(0.5f, 0.25f).ok());
  for (auto [w, h] : {std::pair{0.f, 1.f}, {1.f, -1.f}, {nan, 1.f}, {1.f, inf}}) {
    EXPECT_EQ(validateQuadExtent(w, h).error().code, ErrorCode::invalidArgument) << w << "x" << h;
  }
  EXPECT_TRUE(validatePose(floats({0, 0, 0, 1}), floats({0, 0, -1})).ok());
  EXPECT_FALSE(validatePose(floats({0, 0, 0, 2}), floats({0, 0, -1})).ok());
  EXPECT_FALSE(validatePose(floats({0, 0, 0, 1}), floats({0, nan, -1})).ok());
  EXPECT_FALSE(validatePose(floats({0, 0, 1}), floats({0, 0, -1})).ok());
}

TEST(Layers, Equirect2WindowsMapToEquirectScaleAndBiasAndBack) {
  constexpr float kPi = 3.14159265f;
  // The demo's 90 x 90 degree window: u = 4 (lon / 2 pi + 1/2) - 1.5, v = 2 polar / pi - 0.5.
  const EquirectMapping demo = equirectMappingOf({kPi / 2, kPi / 4, -kPi / 4});
  EXPECT_FLOAT_EQ(demo.scale[0], 4.f);
  EXPECT_FLOAT_EQ(demo.bias[0], -1.5f);
  EXPECT_FLOAT_EQ(demo.scale[1], 2.f);
  EXPECT_FLOAT_EQ(demo.bias[1], -0.5f);
  for (const Equirect2Window w : {Equirect2Window{kPi / 2, kPi / 4, -kPi / 4},
                                  Equirect2Window{2 * kPi, kPi / 2, -kPi / 2}, Equirect2Window{1.f, 0.3f, -1.2f}}) {
    const auto back = equirect2WindowOf(equirectMappingOf(w));
    ASSERT_TRUE(back) << w.central << " " << w.upper << " " << w.lower;
    EXPECT_NEAR(back->central, w.central, 1e-5f);
    EXPECT_NEAR(back->upper, w.upper, 1e-5f);
    EXPECT_NEAR(back->lower, w.lower, 1e-5f);
  }
  // A window not centred on -z, or a mirrored one, is no equirect2 window.
  EXPECT_FALSE(equirect2WindowOf({{4, 2}, {-1, -0.5f}}));
  EXPECT_FALSE(equirect2WindowOf({{-4, 2}, {2.5f, -0.5f}}));
}

TEST(Layers, ColorScaleAndBiasAreBothAbsentOrFourFiniteValuesEach) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(validateColorScaleBias({}, {}).ok());
  EXPECT_TRUE(validateColorScaleBias(floats({0.5f, 1, 2, 1}), floats({-0.25f, 0, 0.5f, 0})).ok());
  const std::vector<float> ok{1, 1, 1, 1};
  for (const auto& bad : {std::vector<float>{}, std::vector<float>{1, 1, 1}, std::vector<float>{1, 1, 1, 1, 1},
                          std::vector<float>{1, nan, 1, 1}, std::vector<float>{1, 1, inf, 1}}) {
    EXPECT_EQ(validateColorScaleBias(bad, ok).error().code, ErrorCode::invalidArgument) << bad.size();
    EXPECT_EQ(validateColorScaleBias(ok, bad).error().code, ErrorCode::invalidArgument) << bad.size();
  }
}

TEST(VisibilityMasks, KnownTypeFiniteVerticesIndicesInRangeWholeTriangles) {
  const VisibilityMask visible{2, {-1, -1, 1, -1, 1, 1, -1, 1}, {0, 1, 2, 0, 2, 3}};
  EXPECT_TRUE(validateVisibilityMask(visible).ok());
  EXPECT_TRUE(validateVisibilityMask({3, visible.vertices, {0, 1, 2, 3}}).ok());  // a loop: any count
  VisibilityMask bad = visible;
  bad.type = 4;
  EXPECT_FALSE(validateVisibilityMask(bad).ok());
  bad = visible;
  bad.indices.push_back(0);  // not whole triangles
  EXPECT_FALSE(validateVisibilityMask(bad).ok());
  bad = visible;
  bad.indices[5] = 4;  // no vertex 4
  EXPECT_FALSE(validateVisibilityMask(bad).ok());
  bad = visible;
  bad.vertices.pop_back();  // not in pairs
  EXPECT_FALSE(validateVisibilityMask(bad).ok());
  bad = visible;
  bad.vertices[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(validateVisibilityMask(bad).ok());
  bad = visible;
  bad.vertices.assign(2 * (kMaxVisibilityMaskVertices + 1), 0.f);
  EXPECT_FALSE(validateVisibilityMask(bad).ok());
}

}  // namespace
TEST(OverlayPlacement, RangeAndOnlyForOverlays) {
  EXPECT_TRUE(validateOverlayPlacement(false, 0));
  EXPECT_TRUE(validateOverlayPlacement(true, 0));
  EXPECT_TRUE(validateOverlayPlacement(true, kMaxOverlayPlacement));
  EXPECT_EQ(validateOverlayPlacement(true, kMaxOverlayPlacement + 1).error().code, ErrorCode::invalidArgument);
  EXPECT_EQ(validateOverlayPlacement(false, 1).error().code, ErrorCode::invalidArgument);
}

}  // namespace xrc
