// Bad input over the raw wire: each gets a clear error, the offending session keeps working and
// another client rendering at the same time never notices.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.hpp"
#include "raw_rpc.hpp"
#include "xrc/client.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc::test {
namespace {

constexpr VkFormat kColor = VK_FORMAT_R8G8B8A8_SRGB;

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(dir_);
    ASSERT_TRUE(daemon_->ready()) << daemon_->process().output();
    bystander_ = startDemo(*daemon_, dir_, DemoSpec{"bystander", 3, 100000, "separate", false, true, 0, 0, 0, 1});
    auto system = client::describe(daemon_->socket());
    ASSERT_TRUE(system) << system.error().describe();
    device_ = system.value().device;
    daemonHasTimelines_ = system.value().daemonHasTimelineSemaphoreFd;
  }

  void TearDown() override {
    // The daemon is still serving: status answers and the bystander rendered all along.
    auto control = daemon_->control();
    ASSERT_TRUE(control);
    auto status = control->status();
    ASSERT_TRUE(status) << status.error().describe();
    ASSERT_TRUE(bystander_->running()) << bystander_->output();
    uint64_t before = 0;
    for (auto& c : status.value().clients) {
      if (c.name == "bystander") before = c.framesSubmitted;
    }
    EXPECT_TRUE(daemon_->waitForStatus(
        [&](const control::DaemonStatus& s) {
          for (auto& c : s.clients) {
            if (c.name == "bystander" && c.framesSubmitted > before + 10) return true;
          }
          return false;
        },
        std::chrono::seconds(30)));
    EXPECT_TRUE(daemon_->process().running()) << daemon_->process().output();
  }

  // A session opened on the raw wire, bypassing client-lib's own checks.
  struct Raw {
    std::unique_ptr<RawRpc> link;
    wire::Session::Client session{nullptr};
  };

  wire::ErrorCode connect(Raw& raw, uint16_t major = kProtocolMajor, bool corruptUuid = false, bool overlay = false,
                          uint32_t overlayPlacement = 0, uint16_t minor = 0, bool sharesTimelines = false) {
    raw.link = RawRpc::open(daemon_->socket());
    EXPECT_TRUE(raw.link);
    auto request = raw.link->bootstrap().connectRequest();
    auto info = request.initClient();
    auto version = info.initVersion();
    version.setMajor(major);
    version.setMinor(minor);
    info.setName("raw");
    DeviceFacts facts = device_;
    if (corruptUuid) facts.deviceUuid[0] ^= 0xff;
    toWire(facts, info.initDevice());
    // Claimed only where asked: otherwise the raw session stays in host mode.
    info.setHasExternalSemaphoreFd(sharesTimelines);
    info.setHasTimelineSemaphoreFd(sharesTimelines);
    info.setOverlay(overlay);
    info.setOverlayPlacement(overlayPlacement);
    auto response = request.send().wait(raw.link->waitScope());
    if (response.getError().getCode() == wire::ErrorCode::NONE) raw.session = response.getSession();
    lastMessage_ = response.getError().getMessage().cStr();
    return response.getError().getCode();
  }

  struct Created {
    wire::ErrorCode code;
    wire::Swapchain::Client swapchain{nullptr};
    uint32_t id = 0;
  };

  Created create(Raw& raw, SwapchainRequest r) {
    auto request = raw.session.createSwapchainRequest();
    toWire(r, request.initInfo());
    auto response = request.send().wait(raw.link->waitScope());
    lastMessage_ = response.getError().getMessage().cStr();
    Created out{response.getError().getCode()};
    if (out.code == wire::ErrorCode::NONE) {
      out.swapchain = response.getSwapchain();
      out.id = response.getId();
    }
    return out;
  }

  static SwapchainRequest color(uint32_t w = 64, uint32_t h = 64) {
    SwapchainRequest r;
    r.usageFlags = xr_usage::colorAttachment | xr_usage::transferDst;
    r.format = kColor;
    r.width = w;
    r.height = h;
    return r;
  }

  template <typename Request>
  wire::ErrorCode call(Raw& raw, Request&& request) {
    auto response = request.send().wait(raw.link->waitScope());
    lastMessage_ = response.getError().getMessage().cStr();
    return response.getError().getCode();
  }
  wire::ErrorCode acquire(Raw& raw, Created& sc, uint32_t i) {
    auto r = sc.swapchain.acquireRequest();
    r.setIndex(i);
    return call(raw, r);
  }
  wire::ErrorCode wait(Raw& raw, Created& sc, uint32_t i) {
    auto r = sc.swapchain.waitRequest();
    r.setIndex(i);
    return call(raw, r);
  }
  wire::ErrorCode release(Raw& raw, Created& sc, uint32_t i, bool alsoAcquireAndWait = false) {
    auto r = sc.swapchain.releaseRequest();
    r.setIndex(i);
    r.setAlsoAcquireAndWait(alsoAcquireAndWait);
    return call(raw, r);
  }
  uint64_t waitFrame(Raw& raw) {
    auto response = raw.session.waitFrameRequest().send().wait(raw.link->waitScope());
    return response.getTiming().getFrameId();
  }
  wire::ErrorCode begin(Raw& raw, uint64_t frame) {
    auto r = raw.session.beginFrameRequest();
    r.setFrameId(frame);
    return call(raw, r);
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
  std::unique_ptr<Process> bystander_;
  DeviceFacts device_;
  bool daemonHasTimelines_ = false;
  std::string lastMessage_;
};

TEST_F(BadInput, ProtocolMajorMismatch) {
  Raw raw;
  EXPECT_EQ(connect(raw, kProtocolMajor + 1), wire::ErrorCode::VERSION_MISMATCH);
  EXPECT_NE(lastMessage_.find("major"), std::string::npos) << lastMessage_;
}

TEST_F(BadInput, DeviceUuidMismatch) {
  Raw raw;
  EXPECT_EQ(connect(raw, kProtocolMajor, true), wire::ErrorCode::DEVICE_MISMATCH);
  EXPECT_NE(lastMessage_.find("not the daemon's device"), std::string::npos) << lastMessage_;
}

// Overlay placements outside 0..kMaxOverlayPlacement, or given to a normal session, are refused
// at connect; the daemon keeps serving (the bystander keeps rendering, a good overlay connects).
TEST_F(BadInput, OverlayPlacementOutOfRange) {
  Raw tooHigh, notOverlay, good;
  EXPECT_EQ(connect(tooHigh, kProtocolMajor, false, true, kMaxOverlayPlacement + 1), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_NE(lastMessage_.find("outside 0..1000"), std::string::npos) << lastMessage_;
  EXPECT_EQ(connect(notOverlay, kProtocolMajor, false, false, 3), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_NE(lastMessage_.find("not an overlay"), std::string::npos) << lastMessage_;
  EXPECT_EQ(connect(good, kProtocolMajor, false, true, kMaxOverlayPlacement), wire::ErrorCode::NONE) << lastMessage_;
}

TEST_F(BadInput, SwapchainParameters) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE) << lastMessage_;
  auto r = color(0, 64);
  EXPECT_EQ(create(raw, r).code, wire::ErrorCode::INVALID_ARGUMENT) << "zero extent";
  r = color(kMaxExtent + 1, 64);
  EXPECT_EQ(create(raw, r).code, wire::ErrorCode::INVALID_ARGUMENT) << "oversize";
  r = color();
  r.format = VK_FORMAT_R4G4_UNORM_PACK8;
  EXPECT_EQ(create(raw, r).code, wire::ErrorCode::UNSUPPORTED) << "format";
  r = color();
  r.arraySize = 1u << 30;
  EXPECT_EQ(create(raw, r).code, wire::ErrorCode::INVALID_ARGUMENT) << "array layers";
  r = color();
  r.mipCount = 40;
  EXPECT_EQ(create(raw, r).code, wire::ErrorCode::INVALID_ARGUMENT) << "mip count";
  EXPECT_NE(lastMessage_.find("mip count 40"), std::string::npos) << lastMessage_;
  // The session is unharmed.
  EXPECT_EQ(create(raw, color()).code, wire::ErrorCode::NONE) << lastMessage_;
}

TEST_F(BadInput, ImageIndexOutOfRange) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE);
  auto sc = create(raw, color());
  ASSERT_EQ(sc.code, wire::ErrorCode::NONE);
  EXPECT_EQ(acquire(raw, sc, 99), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(wait(raw, sc, 99), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(release(raw, sc, 4000000000u), wire::ErrorCode::INVALID_ARGUMENT);
}

TEST_F(BadInput, ReleaseOrWaitWithoutAcquire) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE);
  auto sc = create(raw, color());
  EXPECT_EQ(release(raw, sc, 0), wire::ErrorCode::CALL_ORDER);
  EXPECT_EQ(wait(raw, sc, 0), wire::ErrorCode::CALL_ORDER);
  ASSERT_EQ(acquire(raw, sc, 0), wire::ErrorCode::NONE);
  EXPECT_EQ(release(raw, sc, 0), wire::ErrorCode::CALL_ORDER) << "release before wait";
  ASSERT_EQ(wait(raw, sc, 0), wire::ErrorCode::NONE);
  ASSERT_EQ(release(raw, sc, 0), wire::ErrorCode::NONE) << lastMessage_;
}

TEST_F(BadInput, DoubleRelease) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE);
  auto sc = create(raw, color());
  ASSERT_EQ(acquire(raw, sc, 0), wire::ErrorCode::NONE);
  ASSERT_EQ(wait(raw, sc, 0), wire::ErrorCode::NONE);
  ASSERT_EQ(release(raw, sc, 0), wire::ErrorCode::NONE) << lastMessage_;
  EXPECT_EQ(release(raw, sc, 0), wire::ErrorCode::CALL_ORDER);
}

// Protocol 1.4's one-call image cycle obeys the same rules, and a refused one changes nothing.
TEST_F(BadInput, OneCallImageCycleOutOfOrder) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE);
  auto sc = create(raw, color());
  EXPECT_EQ(release(raw, sc, 1, true), wire::ErrorCode::CALL_ORDER) << "not the next image";
  EXPECT_NE(lastMessage_.find("out of order"), std::string::npos) << lastMessage_;
  EXPECT_EQ(release(raw, sc, 77, true), wire::ErrorCode::INVALID_ARGUMENT);
  ASSERT_EQ(acquire(raw, sc, 0), wire::ErrorCode::NONE);
  EXPECT_EQ(release(raw, sc, 1, true), wire::ErrorCode::CALL_ORDER) << "image 0 is still acquired";
  ASSERT_EQ(wait(raw, sc, 0), wire::ErrorCode::NONE);
  ASSERT_EQ(release(raw, sc, 0), wire::ErrorCode::NONE) << lastMessage_;
  // Image 1 is untouched by the refused calls: its one-call cycle goes through now.
  EXPECT_EQ(release(raw, sc, 1, true), wire::ErrorCode::NONE) << lastMessage_;
  EXPECT_EQ(release(raw, sc, 1, true), wire::ErrorCode::CALL_ORDER) << "image 2 is next";
}

TEST_F(BadInput, AcquireBeyondImageCount) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE);
  auto sc = create(raw, color());
  uint32_t acquired = 0;
  while (acquired < 16 && acquire(raw, sc, acquired) == wire::ErrorCode::NONE) ++acquired;
  EXPECT_GE(acquired, 2u);
  EXPECT_LT(acquired, 16u);
  EXPECT_EQ(acquire(raw, sc, 0), wire::ErrorCode::EXHAUSTED);
}

TEST_F(BadInput, LayerNamingAnotherSessionsSwapchain) {
  Raw mine, theirs;
  ASSERT_EQ(connect(mine), wire::ErrorCode::NONE);
  ASSERT_EQ(connect(theirs), wire::ErrorCode::NONE);
  auto own = create(mine, color());
  create(theirs, color());
  auto foreign = create(theirs, color());
  ASSERT_EQ(foreign.code, wire::ErrorCode::NONE);
  ASSERT_NE(foreign.id, own.id);
  ASSERT_EQ(acquire(mine, own, 0), wire::ErrorCode::NONE);
  ASSERT_EQ(wait(mine, own, 0), wire::ErrorCode::NONE);
  ASSERT_EQ(release(mine, own, 0), wire::ErrorCode::NONE);

  const uint64_t frame = waitFrame(mine);
  ASSERT_EQ(begin(mine, frame), wire::ErrorCode::NONE);
  auto endFrame = [&](uint32_t swapchainId, int layers, float quadWidth, int64_t displayTime = 1) {
    auto request = mine.session.endFrameRequest();
    request.setFrameId(frame);
    request.setDisplayTime(displayTime);
    auto list = request.initLayers(layers);
    for (auto layer : list) {
      auto quad = layer.initQuad();
      auto sub = quad.initSubImage();
      sub.setSwapchainId(swapchainId);
      sub.initImageRect().setWidth(64);
      sub.getImageRect().setHeight(64);
      auto pose = quad.initPose();
      pose.initOrientation(4).set(3, 1.f);
      pose.initPosition(3).set(2, -1.f);
      quad.setWidth(quadWidth);
      quad.setHeight(0.5f);
    }
    return call(mine, request);
  };
  EXPECT_EQ(endFrame(foreign.id, 1, 0.5f), wire::ErrorCode::NOT_FOUND);
  EXPECT_NE(lastMessage_.find("not a swapchain of this session"), std::string::npos) << lastMessage_;
  EXPECT_EQ(endFrame(own.id, kMaxLayersPerFrame + 1, 0.5f), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(endFrame(own.id, 1, std::numeric_limits<float>::quiet_NaN()), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(endFrame(own.id, 1, 0.f), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(endFrame(own.id, 1, 0.5f, 0), wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_NE(lastMessage_.find("display time 0 is not positive"), std::string::npos) << lastMessage_;
  // Nothing was disturbed: the same frame still ends correctly.
  EXPECT_EQ(endFrame(own.id, 1, 0.5f), wire::ErrorCode::NONE) << lastMessage_;
}

// 1.13, timeline mode: settleReleases calls waiting for a release answered early are bounded (64
// per session; one more is answered `exhausted` at once), and every waiting one is answered once
// that release settles, here by hung_client_timeout_ms: nothing ever signals its rendering.
TEST_F(BadInput, SettleReleasesCallsWaitingAreBounded) {
  if (!daemonHasTimelines_) GTEST_SKIP() << "the daemon's device shares no timeline semaphores (lavapipe)";
  Raw raw;
  ASSERT_EQ(connect(raw, kProtocolMajor, false, false, 0, 13, /*sharesTimelines=*/true), wire::ErrorCode::NONE)
      << lastMessage_;
  auto sc = create(raw, color());
  ASSERT_EQ(sc.code, wire::ErrorCode::NONE) << lastMessage_;
  auto end = raw.session.endFrameRequest();
  end.setFrameId(1);  // never begun: the frame is refused, its releases are applied
  auto releases = end.initReleases(1);
  releases[0].setSwapchainId(sc.id);
  releases[0].setIndex(0);
  releases[0].setRenderingValue(1);
  auto ended = end.send().wait(raw.link->waitScope());
  ASSERT_EQ(ended.getReleaseErrors().size(), 1u);
  ASSERT_EQ(ended.getReleaseErrors()[0].getCode(), wire::ErrorCode::NONE)
      << "answered once accepted: " << ended.getReleaseErrors()[0].getMessage().cStr();
  auto settleRequest = [&] {
    auto request = raw.session.settleReleasesRequest();
    request.setSwapchainId(sc.id);
    request.setIndex(0);
    return request;
  };
  std::vector<capnp::RemotePromise<wire::Session::SettleReleasesResults>> waiting;
  for (int i = 0; i < 64; ++i) waiting.push_back(settleRequest().send());
  auto extra = settleRequest().send().wait(raw.link->waitScope());
  EXPECT_EQ(extra.getError().getCode(), wire::ErrorCode::EXHAUSTED);
  EXPECT_NE(std::string(extra.getError().getMessage().cStr()).find("already waiting"), std::string::npos);
  size_t settlements = 0;
  for (auto& promise : waiting) {
    auto answer = promise.wait(raw.link->waitScope());
    EXPECT_EQ(answer.getError().getCode(), wire::ErrorCode::NONE);
    for (auto settled : answer.getSettled()) {
      settlements++;
      EXPECT_EQ(settled.getSwapchainId(), sc.id);
      EXPECT_EQ(settled.getError().getCode(), wire::ErrorCode::TIMEOUT) << settled.getError().getMessage().cStr();
    }
  }
  EXPECT_EQ(settlements, 1u) << "each settlement is reported exactly once";
}

TEST_F(BadInput, FrameCallsOutOfOrder) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE);
  EXPECT_EQ(begin(raw, 1), wire::ErrorCode::CALL_ORDER);
  auto end = raw.session.endFrameRequest();
  end.setFrameId(1);
  EXPECT_EQ(call(raw, end), wire::ErrorCode::CALL_ORDER);
  const uint64_t frame = waitFrame(raw);
  EXPECT_EQ(begin(raw, frame + 1), wire::ErrorCode::CALL_ORDER);
  EXPECT_EQ(begin(raw, frame), wire::ErrorCode::NONE);

  // 1.4: an endFrame that also begins needs the frame the last waitFrame returned.
  const uint64_t next = waitFrame(raw);
  auto endAndBegin = [&](uint64_t id) {
    auto request = raw.session.endFrameRequest();
    request.setFrameId(id);
    request.setDisplayTime(1);
    request.setAlsoBegin(true);
    return call(raw, request);
  };
  EXPECT_EQ(endAndBegin(next + 1), wire::ErrorCode::CALL_ORDER);
  EXPECT_NE(lastMessage_.find("was not returned by the last waitFrame"), std::string::npos) << lastMessage_;
  EXPECT_EQ(endAndBegin(next), wire::ErrorCode::NONE) << lastMessage_;
  EXPECT_EQ(endAndBegin(next), wire::ErrorCode::CALL_ORDER) << "that frame is over";
}

// 1.5: an endFrame carrying releases answers each one as its own call would, applies them even
// when the frame is refused, and stands for the next waitFrame; a waitFrame may replace that
// implied one while its frame is not begun. Too many releases: refused whole, nothing applied.
TEST_F(BadInput, EndFrameCarryingReleasesAndTheNextWait) {
  Raw raw;
  ASSERT_EQ(connect(raw), wire::ErrorCode::NONE);
  auto sc = create(raw, color());
  ASSERT_EQ(sc.code, wire::ErrorCode::NONE);
  struct Answer {
    wire::ErrorCode frame;
    std::vector<wire::ErrorCode> releases;
    wire::ErrorCode next;
    uint64_t nextFrame = 0;
    int64_t nextDisplayTime = 0;
  };
  auto endFrame = [&](uint64_t frameId, bool alsoBegin, std::vector<std::pair<uint32_t, uint32_t>> releases,
                      bool alsoWaitNext) {
    auto request = raw.session.endFrameRequest();
    request.setFrameId(frameId);
    request.setDisplayTime(1);
    request.setAlsoBegin(alsoBegin);
    auto list = request.initReleases(uint32_t(releases.size()));
    for (uint32_t i = 0; i < releases.size(); ++i) {
      list[i].setSwapchainId(releases[i].first);
      list[i].setIndex(releases[i].second);
    }
    request.setAlsoWaitNext(alsoWaitNext);
    auto response = request.send().wait(raw.link->waitScope());
    Answer a{response.getError().getCode(), {}, response.getNextError().getCode()};
    lastMessage_ = response.getError().getMessage().cStr();
    for (auto e : response.getReleaseErrors()) a.releases.push_back(e.getCode());
    if (response.hasNext()) {
      a.nextFrame = response.getNext().getFrameId();
      a.nextDisplayTime = response.getNext().getPredictedDisplayTime();
    }
    return a;
  };

  // Frame refused (never waited for), its releases still applied one by one: image 0 of our
  // swapchain goes through, an unknown swapchain and an out-of-order image do not.
  Answer a = endFrame(99, false, {{sc.id, 0}, {sc.id + 100, 0}, {sc.id, 2}}, true);
  EXPECT_EQ(a.frame, wire::ErrorCode::CALL_ORDER) << lastMessage_;
  ASSERT_EQ(a.releases.size(), 3u);
  EXPECT_EQ(a.releases[0], wire::ErrorCode::NONE);
  EXPECT_EQ(a.releases[1], wire::ErrorCode::NOT_FOUND);
  EXPECT_EQ(a.releases[2], wire::ErrorCode::CALL_ORDER);
  // ...and the implied wait was answered as a waitFrame would be.
  EXPECT_EQ(a.next, wire::ErrorCode::NONE);
  ASSERT_NE(a.nextFrame, 0u);
  EXPECT_GT(a.nextDisplayTime, 0);

  // A waitFrame replaces the implied one: its frame can be begun, the implied one cannot.
  const uint64_t implied = a.nextFrame;
  const uint64_t waited = waitFrame(raw);
  EXPECT_NE(waited, implied);
  EXPECT_EQ(begin(raw, implied), wire::ErrorCode::CALL_ORDER);

  // One call per frame: begin, release image 1 (acquire and wait implied), end, wait next.
  a = endFrame(waited, true, {{sc.id, 1}}, true);
  EXPECT_EQ(a.frame, wire::ErrorCode::NONE) << lastMessage_;
  ASSERT_EQ(a.releases.size(), 1u);
  EXPECT_EQ(a.releases[0], wire::ErrorCode::NONE);
  EXPECT_EQ(a.next, wire::ErrorCode::NONE);
  EXPECT_GT(a.nextFrame, waited);
  a = endFrame(a.nextFrame, true, {{sc.id, 2}}, false);
  EXPECT_EQ(a.frame, wire::ErrorCode::NONE) << lastMessage_;
  EXPECT_EQ(a.next, wire::ErrorCode::NONE) << "no wait asked for, none answered";
  EXPECT_EQ(a.nextFrame, 0u);

  // More releases than one endFrame may carry: refused whole; image 0's cycle is untouched.
  std::vector<std::pair<uint32_t, uint32_t>> many(kMaxReleasesPerEndFrame + 1, {sc.id, 0});
  a = endFrame(1, false, many, true);
  EXPECT_EQ(a.frame, wire::ErrorCode::INVALID_ARGUMENT);
  EXPECT_NE(lastMessage_.find("releases exceed the maximum"), std::string::npos) << lastMessage_;
  EXPECT_TRUE(a.releases.empty());
  EXPECT_EQ(a.next, wire::ErrorCode::INVALID_ARGUMENT);
  a = endFrame(1, false, {{sc.id, 0}}, false);
  ASSERT_EQ(a.releases.size(), 1u);
  EXPECT_EQ(a.releases[0], wire::ErrorCode::NONE) << "image 0 is next and was never applied";
}

TEST_F(BadInput, ControlFromAnotherUidIsRefused) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  // A child that drops to uid 65534 asks for the control interface (it may connect: the
  // socket is opened up for the test, the control call itself must refuse it).
  ASSERT_EQ(::chmod(dir_.path.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(daemon_->socket().c_str(), 0777), 0);
  pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(3);
    auto c = control::ControlClient::connect(daemon_->socket());
    _exit(!c && c.error().code == ErrorCode::permissionDenied ? 0 : c ? 1 : 2);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace xrc::test
