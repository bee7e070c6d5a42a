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

std::map<std::string, std::string> openxrEnv(const Daemon& daemon) {
  auto env = validationEnv();
  env["XR_RUNTIME_JSON"] = binary("XRC_OPENXR_MANIFEST");
  env["XR_COMPOSITOR_SOCKET"] = daemon.socket();
  env["XR_ENABLE_API_LAYERS"] = "XR_APILAYER_LUNARG_core_validation";
  // Sanitizer builds: hello_xr is not instrumented but loads our sanitized runtime, so the
  // sanitizer runtime goes first; leaks of the app and its layers are not ours to report (the
  // runtime's own are checked where it runs inside the test process).
  const std::string preload = binary("XRC_APP_SANITIZER_PRELOAD");
  if (!preload.empty()) {
    const char* existing = std::getenv("LD_PRELOAD");
    env["LD_PRELOAD"] = preload + (existing ? " " + std::string(existing) : "");
    const char* asan = std::getenv("ASAN_OPTIONS");
    env["ASAN_OPTIONS"] = std::string(asan ? asan : "") + ":detect_leaks=0";
    // TSan cannot judge an uninstrumented program: hello_xr's own inline copies of libstdc++'s
    // shared_ptr counting get bound for our code too, and their atomics are invisible to it.
    // The runtime's threading is checked where it runs inside the instrumented test process
    // (openxr_bad_input_test, including the split frame loop).
    const char* tsan = std::getenv("TSAN_OPTIONS");
    env["TSAN_OPTIONS"] = std::string(tsan ? tsan : "") + " report_bugs=0";
  }
  return env;
}

// hello_xr quits on the first byte or EOF on stdin, so its stdin is a pipe held open.
std::unique_ptr<Process> startHelloXr(const Daemon& daemon, const TempDir& dir, const std::string& graphics,
                                      const std::string& logName) {
  return std::make_unique<Process>(
      std::vector<std::string>{"/usr/bin/stdbuf", "-oL", binary("XRC_HELLO_XR"), "-g", graphics, "-v"},
      openxrEnv(daemon), dir.path + "/" + logName, true);
}

// What either validation layer (or hello_xr itself) reports as a problem.
std::vector<std::string> problemsIn(const std::string& output) {
  std::vector<std::string> problems;
  // Vulkan: "Validation Error: [ VUID-... ]", "SYNC-HAZARD-..."; OpenXR core validation:
  // "[VALID_ERROR | VUID-... | xrCall]: ..."; hello_xr: "XrResult failure", "[Error".
  static const char* kMarkers[] = {"VUID-",  "SYNC-HAZARD", "Validation Error", "VALID_ERROR", "XrResult failure",
                                   "[Error", "Assertion"};
  size_t lineStart = 0;
  while (lineStart < output.size()) {
    size_t lineEnd = output.find('\n', lineStart);
    if (lineEnd == std::string::npos) lineEnd = output.size();
    const std::string line = output.substr(lineStart, lineEnd - lineStart);
    for (const char* marker : kMarkers) {
      if (line.find(marker) != std::string::npos) {
        problems.push_back(line);
        break;
      }
    }
    lineStart = lineEnd + 1;
  }
  return problems;
}

const control::ClientStatus* findClient(const control::DaemonStatus& status, const std::string& name) {
  for (const auto& c : status.clients) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The display's most common RGBA value over one eye's half, and its share of that half.
std::pair<uint32_t, double> dominantColor(const Pixels& px, uint32_t eye) {
  std::map<uint32_t, size_t> counts;
  const uint32_t half = px.width / 2;
  for (uint32_t y = 0; y < px.height; ++y) {
    for (uint32_t x = 0; x < half; ++x) {
      uint32_t v;
      std::memcpy(&v, &px.data[(size_t(y) * px.width + eye * half + x) * 4], 4);
      counts[v]++;
    }
  }
  auto best = std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.second < b.second; });
  return {best->first, double(best->second) / (double(half) * px.height)};
}

// hello_xr clears to DarkSlateGray (0.184, 0.310, 0.310) into an sRGB swapchain image: stored
// sRGB-encoded that is about (119, 151, 151); the headless display keeps the bytes it is given.
bool isHelloXrBackground(uint32_t rgba) {
  const int r = int(rgba & 0xff), g = int((rgba >> 8) & 0xff), b = int((rgba >> 16) & 0xff);
  auto near = [](int v, int want) { return std::abs(v - want) <= 3; };
  return (near(r, 119) && near(g, 151) && near(b, 151)) || (near(r, 47) && near(g, 79) && near(b, 79));
}

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
  for (uint32_t eye = 0; eye < 2; ++eye) {
    auto [color, share] = dominantColor(display.value().pixels, eye);
    EXPECT_TRUE(isHelloXrBackground(color)) << "eye " << eye << " dominant color " << std::hex << color;
    EXPECT_GT(share, 0.5) << "eye " << eye;
    EXPECT_LT(share, 0.999) << "eye " << eye << ": nothing drawn over the background";
  }
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
