// The daemon as systemd runs it: readiness over NOTIFY_SOCKET, and a socket handed over by
// socket activation (systemd-socket-activate does what systemd does with a .socket unit).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::test {
namespace {

// A NOTIFY_SOCKET listener: a datagram socket like the one systemd reads.
class NotifyListener {
 public:
  explicit NotifyListener(const std::string& path) : path_(path), fd_(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    bound_ = ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  bool bound() const { return bound_; }
  // Every message received within `window`.
  std::vector<std::string> collect(std::chrono::milliseconds window) {
    std::vector<std::string> out;
    const auto deadline = std::chrono::steady_clock::now() + window;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
      if (n > 0) out.emplace_back(buffer, size_t(n));
    }
    return out;
  }
  // Messages received within `timeout`, until one contains `text`.
  bool waitFor(const std::string& text, std::chrono::milliseconds timeout, std::string* all) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
      if (n <= 0) continue;
      all->append(buffer, size_t(n)).append("\n");
      if (std::string(buffer, size_t(n)).find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::string path_;
  UniqueFd fd_;
  bool bound_ = false;
};

TEST(Systemd, ReadyIsNotifiedOnceTheDaemonServesAndStoppingAtShutdown) {
  TempDir dir;
  NotifyListener listener(dir.path + "/notify");
  ASSERT_TRUE(listener.bound());
  Daemon daemon(dir, {}, {{"NOTIFY_SOCKET", dir.path + "/notify"}});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  std::string seen;
  ASSERT_TRUE(listener.waitFor("READY=1", std::chrono::seconds(10), &seen)) << seen;
  EXPECT_NE(seen.find("STATUS=serving"), std::string::npos) << seen;
  // READY means it serves: a client completes frames right away.
  auto demo = startDemo(daemon, dir, DemoSpec{"after-ready", 3, 20});
  EXPECT_TRUE(demo->waitForOutput("frames 20 ok", std::chrono::seconds(60))) << demo->output();
  demo->closeStdin();  // the harness's demos hold until told to go
  EXPECT_EQ(demo->wait(std::chrono::seconds(20)), 0) << demo->output();
  daemon.process().signal(SIGTERM);
  EXPECT_TRUE(listener.waitFor("STOPPING=1", std::chrono::seconds(10), &seen)) << seen;
  EXPECT_EQ(daemon.process().wait(std::chrono::seconds(20)), 0);
}

TEST(Systemd, ShutdownAsksClientsToLeaveAndWaitsForThem) {
  TempDir dir;
  Daemon daemon(dir, {"--shutdown-grace-ms", "5000"});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto demo = startDemo(daemon, dir, DemoSpec{"told-to-leave", 4, 100000});
  ASSERT_TRUE(demo->waitForOutput("connected", std::chrono::seconds(20))) << demo->output();
  daemon.process().signal(SIGTERM);
  EXPECT_TRUE(demo->waitForOutput("daemon is stopping: leaving after", std::chrono::seconds(10))) << demo->output();
  EXPECT_EQ(demo->wait(std::chrono::seconds(10)), 0) << demo->output();
  // It left on its own, well inside the 5 s grace period.
  EXPECT_EQ(daemon.process().wait(std::chrono::seconds(4)), 0) << daemon.process().output();
  EXPECT_EQ(daemon.process().output().find("did not leave"), std::string::npos) << daemon.process().output();
}

size_t countContaining(const std::vector<std::string>& messages, const std::string& text) {
  size_t n = 0;
  for (const auto& m : messages) n += m.find(text) != std::string::npos;
  return n;
}

// With no client the display has nothing to show and sleeps; the watchdog is fed all the same.
TEST(Systemd, AnIdleDaemonKeepsFeedingTheWatchdog) {
  TempDir dir;
  NotifyListener listener(dir.path + "/notify");
  ASSERT_TRUE(listener.bound());
  Daemon daemon(dir, {}, {{"NOTIFY_SOCKET", dir.path + "/notify"}, {"WATCHDOG_USEC", "400000"}});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  std::string seen;
  ASSERT_TRUE(listener.waitFor("READY=1", std::chrono::seconds(10), &seen)) << seen;
  auto idle = listener.collect(std::chrono::milliseconds(2000));
  EXPECT_GE(countContaining(idle, "WATCHDOG=1"), 8u);
  EXPECT_EQ(countContaining(idle, "frame loop stalled"), 0u);
  EXPECT_EQ(daemon.process().output().find("frame loop stalled"), std::string::npos) << daemon.process().output();
}

TEST(Systemd, WatchdogIsFedOnlyWhileTheFrameLoopRuns) {
  TempDir dir;
  NotifyListener listener(dir.path + "/notify");
  ASSERT_TRUE(listener.bound());
  // WatchdogSec=0.4s as systemd would pass it (without WATCHDOG_PID any process may use it).
  Daemon daemon(dir, {"--test-hooks"}, {{"NOTIFY_SOCKET", dir.path + "/notify"}, {"WATCHDOG_USEC", "400000"}});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto demo = startDemo(daemon, dir, DemoSpec{"watched", 5, 100000});
  std::string seen;
  ASSERT_TRUE(listener.waitFor("READY=1", std::chrono::seconds(10), &seen)) << seen;
  ASSERT_TRUE(listener.waitFor("STATUS=serving 1 client, display", std::chrono::seconds(10), &seen)) << seen;
  // Running: fed at least twice per 0.4 s interval.
  auto running = listener.collect(std::chrono::milliseconds(1000));
  EXPECT_GE(countContaining(running, "WATCHDOG=1"), 4u);
  // Nor was it missed before the client's first frame, while the display had nothing to show
  // and slept (it wakes twice per health check).
  EXPECT_EQ(daemon.process().output().find("frame loop stalled"), std::string::npos) << daemon.process().output();

  daemon.process().signal(SIGUSR2);  // the display loop stalls
  ASSERT_TRUE(listener.waitFor(", frame loop stalled", std::chrono::seconds(5), &seen)) << seen;
  EXPECT_TRUE(daemon.process().waitForOutput("frame loop stalled", std::chrono::seconds(5)));
  auto stalled = listener.collect(std::chrono::milliseconds(1000));
  EXPECT_EQ(countContaining(stalled, "WATCHDOG=1"), 0u);  // systemd would now restart it

  daemon.process().signal(SIGUSR2);  // and resumes
  ASSERT_TRUE(daemon.process().waitForOutput("frame loop is running again", std::chrono::seconds(5)));
  auto resumed = listener.collect(std::chrono::milliseconds(1000));
  EXPECT_GE(countContaining(resumed, "WATCHDOG=1"), 4u);
  EXPECT_TRUE(demo->running()) << demo->output();  // a stalled display does not hurt the client
}

// systemd's own checker on every unit, with ExecStart pointing at the built daemon (verify
// insists that the command exists).
TEST(Systemd, UnitsPassSystemdAnalyzeVerify) {
  if (::access("/usr/bin/systemd-analyze", X_OK) != 0) GTEST_SKIP() << "systemd-analyze is not installed";
  const std::string source = binary("XRC_SYSTEMD_UNITS");
  ASSERT_FALSE(source.empty());
  for (const std::string variant : {"", "user"}) {
    TempDir dir;
    std::vector<std::string> argv{"/usr/bin/systemd-analyze"};
    if (!variant.empty()) argv.push_back("--user");
    argv.push_back("verify");
    for (const char* unit : {"xr-compositord.socket", "xr-compositord.service"}) {
      std::ifstream in(source + (variant.empty() ? "" : "/" + variant) + "/" + unit);
      ASSERT_TRUE(in) << unit;
      std::stringstream text;
      text << in.rdbuf();
      std::string content = text.str();
      const std::string installed = "/usr/bin/xr-compositord";
      for (size_t at = content.find(installed); at != std::string::npos; at = content.find(installed)) {
        content.replace(at, installed.size(), binary("XRC_DAEMON"));
      }
      std::ofstream(dir.path + "/" + unit) << content;
      argv.push_back(dir.path + "/" + unit);
    }
    Process verify(argv, {{"XDG_RUNTIME_DIR", dir.path}}, dir.path + "/verify.log");
    EXPECT_EQ(verify.wait(std::chrono::seconds(60)), 0) << variant << ": " << verify.output();
    EXPECT_EQ(verify.output(), "") << variant;
  }
}

TEST(Systemd, SocketActivatedDaemonServesOnTheSocketItWasGiven) {
  if (::access("/usr/bin/systemd-socket-activate", X_OK) != 0) {
    GTEST_SKIP() << "systemd-socket-activate is not installed (tools/scripts/deps.sh installs it)";
  }
  TempDir dir;
  const std::string socket = dir.path + "/activated.sock";
  // systemd-socket-activate binds and listens, then execs the daemon with LISTEN_FDS=1.
  // It starts the daemon with a clean environment: pass on what the other tests' daemons inherit
  // (sanitizer options and preloads, the Vulkan loader's settings).
  std::vector<std::string> argv{"/usr/bin/systemd-socket-activate", "-l", socket};
  for (const char* name : {"LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS",
                           "VK_ICD_FILENAMES", "VK_LAYER_PATH", "XDG_RUNTIME_DIR"}) {
    if (std::getenv(name) != nullptr) argv.insert(argv.end(), {"-E", name});
  }
  argv.insert(argv.end(), {binary("XRC_DAEMON"), "--socket", socket, "--view-size", "256x256"});
  Process daemon(argv, {}, dir.path + "/daemon.log");
  for (int i = 0; i < 100 && ::access(socket.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(::access(socket.c_str(), F_OK), 0) << daemon.output();
  Process demo({binary("XRC_DEMO"), "--socket", socket, "--frames", "20", "--name", "activated"}, {},
               dir.path + "/demo.log");
  EXPECT_EQ(demo.wait(std::chrono::seconds(60)), 0) << demo.output() << daemon.output();
  EXPECT_TRUE(daemon.waitForOutput("socket from systemd", std::chrono::seconds(5))) << daemon.output();
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(std::chrono::seconds(20)), 0) << daemon.output();
}

}  // namespace
}  // namespace xrc::test
