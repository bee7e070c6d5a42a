// Unmodified OpenXR apps through the runtime face: Debian's hello_xr renders through the daemon
// with the OpenXR core validation layer and Vulkan validation (synchronization included) on.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "harness.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;

void runHelloXr(const std::string& graphics) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto app = startHelloXr(daemon, dir, graphics, "hello_xr.log");
  ASSERT_TRUE(app->waitForOutput("XR_SESSION_STATE_VISIBLE->XR_SESSION_STATE_FOCUSED", 30s)) << app->output();
  // Frames arrive: the daemon counts them for the client named by hello_xr's instance.
  ASSERT_TRUE(daemon.waitForStatus(
      [](const control::DaemonStatus& s) {
        auto c = findClient(s, "HelloXR");
        return c != nullptr && c->framesSubmitted >= 270 && c->swapchains == 2;
      },
      30s))
      << app->output();

  // Its pixels are on the headless display: both eyes show hello_xr's background (and cubes).
  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto display = control->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  EXPECT_EQ(helloXrDisplayProblem(display.value().pixels), "");
  EXPECT_FALSE(display.value().shown.empty());

  app->closeStdin();
  EXPECT_EQ(app->wait(30s), 0) << app->output();
  const std::string out = app->output();
  // The validation layers really ran, and found nothing.
  EXPECT_NE(out.find("Core Validation output type"), std::string::npos) << out;
  EXPECT_NE(out.find("Inserted device layer \"VK_LAYER_KHRONOS_validation\""), std::string::npos) << out;
  const auto problems = problemsIn(out);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems.front();
  EXPECT_TRUE(daemon.process().running());
}

TEST(OpenXrRuntime, HelloXrVulkan2RendersFocusedWithoutValidationErrors) { runHelloXr("Vulkan2"); }

TEST(OpenXrRuntime, HelloXrVulkanRendersFocusedWithoutValidationErrors) { runHelloXr("Vulkan"); }

// Two apps: the first is the primary (FOCUSED), the second runs hidden (SYNCHRONIZED) until the
// operator makes it the primary; then the states swap, one rung at a time.
TEST(OpenXrRuntime, TwoHelloXrProcessesShareTheDaemonAndSwitchPrimary) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto first = startHelloXr(daemon, dir, "Vulkan2", "first.log");
  ASSERT_TRUE(first->waitForOutput("XR_SESSION_STATE_VISIBLE->XR_SESSION_STATE_FOCUSED", 30s)) << first->output();
  auto second = startHelloXr(daemon, dir, "Vulkan", "second.log");
  ASSERT_TRUE(second->waitForOutput("XR_SESSION_STATE_READY->XR_SESSION_STATE_SYNCHRONIZED", 30s)) << second->output();
  ASSERT_TRUE(daemon.waitForStatus(
      [](const control::DaemonStatus& s) {
        return s.clients.size() == 2 && std::all_of(s.clients.begin(), s.clients.end(), [](const auto& c) {
                 return c.name == "HelloXR" && c.framesSubmitted >= 60;
               });
      },
      30s))
      << first->output() << second->output();
  EXPECT_EQ(second->output().find("XR_SESSION_STATE_VISIBLE"), std::string::npos) << second->output();
  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto status = control->status();
  ASSERT_TRUE(status);
  const auto& clients = status.value().clients;
  const uint32_t firstId = std::min(clients[0].id, clients[1].id), secondId = std::max(clients[0].id, clients[1].id);
  ASSERT_EQ(status.value().primaryClientId, firstId);

  ASSERT_TRUE(control->setPrimary(secondId));
  EXPECT_TRUE(second->waitForOutput("XR_SESSION_STATE_SYNCHRONIZED->XR_SESSION_STATE_VISIBLE", 10s))
      << second->output();
  EXPECT_TRUE(second->waitForOutput("XR_SESSION_STATE_VISIBLE->XR_SESSION_STATE_FOCUSED", 10s)) << second->output();
  EXPECT_TRUE(first->waitForOutput("XR_SESSION_STATE_FOCUSED->XR_SESSION_STATE_VISIBLE", 10s)) << first->output();
  EXPECT_TRUE(first->waitForOutput("XR_SESSION_STATE_VISIBLE->XR_SESSION_STATE_SYNCHRONIZED", 10s)) << first->output();
  // The new primary's frames are what the display shows now.
  ASSERT_TRUE(daemon.waitForStatus(
      [&](const control::DaemonStatus& s) {
        return std::any_of(s.clients.begin(), s.clients.end(),
                           [&](const auto& c) { return c.id == secondId && c.framesDisplayed >= 30; });
      },
      10s));
  first->closeStdin();
  second->closeStdin();
  EXPECT_EQ(first->wait(30s), 0) << first->output();
  EXPECT_EQ(second->wait(30s), 0) << second->output();
  for (auto* app : {first.get(), second.get()}) {
    const auto problems = problemsIn(app->output());
    EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems.front();
  }
  EXPECT_TRUE(daemon.waitForStatus([](const control::DaemonStatus& s) { return s.clients.empty(); }, 10s));
}

TEST(OpenXrRuntime, DaemonShutdownEndsTheAppsSessionCleanly) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto app = startHelloXr(daemon, dir, "Vulkan2", "hello_xr.log");
  ASSERT_TRUE(app->waitForOutput("XR_SESSION_STATE_FOCUSED", 30s)) << app->output();
  daemon.process().signal(SIGTERM);
  // STOPPING, then (hello_xr ends its session) IDLE and EXITING; hello_xr then quits by itself.
  EXPECT_TRUE(app->waitForOutput("XR_SESSION_STATE_SYNCHRONIZED->XR_SESSION_STATE_STOPPING", 10s)) << app->output();
  EXPECT_TRUE(app->waitForOutput("XR_SESSION_STATE_IDLE->XR_SESSION_STATE_EXITING", 10s)) << app->output();
  // hello_xr's stdin thread sits in getchar() holding stdin's lock, which newer glibc's exit()
  // then waits for (seen on Ubuntu 24.04): end that read too.
  app->closeStdin();
  EXPECT_EQ(app->wait(20s), 0) << app->output();
  EXPECT_EQ(app->output().find("LOSS_PENDING"), std::string::npos) << app->output();
  // The daemon did not wait out its grace period: the client left.
  EXPECT_EQ(daemon.process().wait(10s), 0) << daemon.process().output();
  EXPECT_EQ(daemon.process().output().find("did not leave"), std::string::npos) << daemon.process().output();
}

TEST(OpenXrRuntime, KillingTheDaemonGivesTheAppLossPendingNotAHang) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto app = startHelloXr(daemon, dir, "Vulkan2", "hello_xr.log");
  ASSERT_TRUE(app->waitForOutput("XR_SESSION_STATE_FOCUSED", 30s)) << app->output();
  ASSERT_TRUE(daemon.waitForStatus(
      [](const control::DaemonStatus& s) {
        auto c = findClient(s, "HelloXR");
        return c != nullptr && c->framesSubmitted >= 30;
      },
      30s));
  daemon.process().signal(SIGKILL);
  // hello_xr sees the state change, tears its session down and (restarting, as it does after a
  // loss) is told at xrCreateInstance that no runtime is there: it ends by itself, no signal.
  // (The core validation layer turns our XR_ERROR_RUNTIME_UNAVAILABLE into
  // XR_ERROR_INITIALIZATION_FAILED; the runtime's own message says what happened.)
  EXPECT_TRUE(app->waitForOutput("XR_SESSION_STATE_FOCUSED->XR_SESSION_STATE_LOSS_PENDING", 10s)) << app->output();
  EXPECT_TRUE(app->waitForOutput("xrCreateInstance: xr-compositord is not reachable", 10s)) << app->output();
  app->closeStdin();  // see DaemonShutdownEndsTheAppsSessionCleanly
  const int status = app->wait(20s);
  EXPECT_NE(status, -1) << "hello_xr hung after the daemon died:\n" << app->output();
  EXPECT_LT(status, 128) << "hello_xr died of a signal:\n" << app->output();
  EXPECT_NE(app->output().find("XrEventDataInstanceLossPending"), std::string::npos) << app->output();
  EXPECT_NE(app->output().find("xrCreateInstance: xr-compositord is not reachable"), std::string::npos)
      << app->output();
}

}  // namespace
}  // namespace xrc::test
