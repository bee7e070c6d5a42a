// client-lib used in-process, the way an engine links it: calls the OpenXR face never makes.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "vulkan_app.hpp"
#include "xrc/client.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;

// A split frame loop: the simulation thread already waits for frame N+1 when the render thread
// begins frame N, and ends it after that wait has returned. With protocol 1.4 the begin could
// travel with the end and reach the daemon after it answered the next wait (a callOrder error);
// a begin made while a wait is on its way must go out at once.
TEST(ClientLib, FrameBegunWhileTheNextWaitIsOnItsWay) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto system = client::describe(daemon.socket());
  ASSERT_TRUE(system) << system.error().describe();
  ASSERT_GE(system.value().protocolMinor, 4u);
  auto app = tools::VulkanApp::create(system.value(), "split-loop");
  ASSERT_TRUE(app) << app.error().describe();
  client::ConnectOptions options;
  options.socketPath = daemon.socket();
  options.applicationName = "split-loop";
  options.vulkan = app.value()->binding();
  auto connection = client::Connection::connect(options);
  ASSERT_TRUE(connection) << connection.error().describe();
  client::Connection& c = *connection.value();

  auto frame = c.waitFrame();
  ASSERT_TRUE(frame) << frame.error().describe();
  constexpr int kFrames = 20;
  for (int i = 0; i < kFrames; ++i) {
    Result<client::FrameTiming> next = makeError(ErrorCode::internal, "not waited");
    std::thread simulation([&] { next = c.waitFrame(); });
    // The daemon answers that wait at the next vsync, ~11 ms away: begin well before.
    std::this_thread::sleep_for(2ms);
    ASSERT_TRUE(c.beginFrame(frame.value().frameId)) << "frame " << i;
    simulation.join();
    ASSERT_TRUE(next) << next.error().describe();
    auto ended = c.endFrame(frame.value().frameId, frame.value().predictedDisplayTimeNs, {});
    ASSERT_TRUE(ended) << ended.error().describe();
    frame = std::move(next);
  }
  // Any error the daemon answered to those calls comes back here.
  ASSERT_TRUE(c.beginFrame(frame.value().frameId));
  ASSERT_TRUE(c.endFrame(frame.value().frameId, frame.value().predictedDisplayTimeNs, {}));
  auto last = c.waitFrame();
  ASSERT_TRUE(last) << last.error().describe();
  auto control = daemon.control();
  ASSERT_TRUE(control);
  EXPECT_TRUE(daemon.waitForStatus(
      [](const control::DaemonStatus& s) {
        return s.clients.size() == 1 && s.clients[0].framesSubmitted == uint64_t(kFrames + 1);
      },
      5s));
}

}  // namespace
}  // namespace xrc::test
