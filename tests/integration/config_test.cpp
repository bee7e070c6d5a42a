// The daemon's configuration file as an operator meets it: a bad file stops it before anything
// starts, SIGHUP reloads what can change and keeps the running settings when the file is bad.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "harness.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;

TEST(Config, BadFileIsRefusedWithItsLineAndNothingStarts) {
  TempDir dir;
  const std::string config = dir.path + "/config.toml";
  std::ofstream(config) << "# xr-compositor\nrefresh_hz = 90\nviewsize = \"800x600\"\n";
  const std::string socket = dir.path + "/daemon.sock";
  Process daemon({binary("XRC_DAEMON"), "--config", config, "--socket", socket}, {}, dir.path + "/daemon.log");
  EXPECT_EQ(daemon.wait(20s), 2);
  EXPECT_NE(daemon.output().find(config + ":3: unknown key 'viewsize'"), std::string::npos) << daemon.output();
  EXPECT_NE(::access(socket.c_str(), F_OK), 0) << "a socket was created";

  Process missing({binary("XRC_DAEMON"), "--config", dir.path + "/nope.toml", "--socket", socket}, {},
                  dir.path + "/missing.log");
  EXPECT_EQ(missing.wait(20s), 2);
  EXPECT_NE(missing.output().find("does not exist"), std::string::npos) << missing.output();
}

TEST(Config, FileSettingsApplyAndTheCommandLineWins) {
  TempDir dir;
  const std::string config = dir.path + "/config.toml";
  std::ofstream(config) << "refresh_hz = 60\nview_size = \"128x96\"\n";
  Daemon daemon(dir, {"--config", config, "--refresh-hz", "72"});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  // The harness passes --view-size 256x256, which beats the file's 128x96; --refresh-hz 72 beats 60.
  EXPECT_NE(daemon.process().output().find("72 Hz, views 2x256x256"), std::string::npos) << daemon.process().output();
}

TEST(Config, SighupReloadsWhatCanChangeAndKeepsTheRunningSettingsOnErrors) {
  TempDir dir;
  const std::string config = dir.path + "/config.toml";
  std::ofstream(config) << "log_level = \"info\"\n";
  Daemon daemon(dir, {"--config", config});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();

  std::ofstream(config) << "log_level = \"debug\"\nshutdown_grace_ms = 200\nrefresh_hz = 60\n";
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(daemon.process().waitForOutput("configuration reloaded: log_level, shutdown_grace_ms", 10s))
      << daemon.process().output();
  EXPECT_TRUE(daemon.process().waitForOutput("changed settings that need a restart: refresh_hz", 10s));
  // Debug logging is on now: a client's swapchain shows up at debug level.
  auto demo = startDemo(daemon, dir, DemoSpec{"after-reload", 2, 20});
  EXPECT_TRUE(daemon.process().waitForOutput("[debug]", 20s)) << daemon.process().output();
  demo->closeStdin();
  EXPECT_EQ(demo->wait(30s), 0) << demo->output();

  std::ofstream(config) << "log_level = \"info\"\nrefresh_hz = \"fast\"\n";
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(daemon.process().waitForOutput(
      "configuration not reloaded, keeping the running one: " + config + ":2: 'refresh_hz' must be a number", 10s))
      << daemon.process().output();
  // Still serving, with the settings it had.
  auto again = startDemo(daemon, dir, DemoSpec{"after-bad-reload", 3, 20});
  EXPECT_TRUE(again->waitForOutput("connected", 20s)) << again->output();
  again->closeStdin();
  EXPECT_EQ(again->wait(30s), 0) << again->output();
  EXPECT_TRUE(daemon.process().running());
}

TEST(Startup, SecondDaemonStaleSocketsAndOtherFilesAtThePath) {
  TempDir dir;
  Daemon first(dir);
  ASSERT_TRUE(first.ready()) << first.process().output();
  // A second daemon on the same socket: refused, the first one unharmed.
  Process second({binary("XRC_DAEMON"), "--socket", first.socket()}, {}, dir.path + "/second.log");
  EXPECT_EQ(second.wait(30s), 1);
  EXPECT_NE(second.output().find("another daemon is already serving"), std::string::npos) << second.output();
  EXPECT_TRUE(first.waitForStatus([](const control::DaemonStatus&) { return true; }, 5s));
  // A crash leaves the socket file behind: the next daemon removes it and serves.
  first.process().signal(SIGKILL);
  ASSERT_NE(first.process().wait(10s), -1);
  ASSERT_EQ(::access(first.socket().c_str(), F_OK), 0);
  Process third({binary("XRC_DAEMON"), "--socket", first.socket(), "--view-size", "64x64"}, {},
                dir.path + "/third.log");
  EXPECT_TRUE(third.waitForOutput("serving", 20s)) << third.output();
  EXPECT_NE(third.output().find("stale socket"), std::string::npos) << third.output();
  third.signal(SIGTERM);
  EXPECT_EQ(third.wait(20s), 0);
  // Something that is not a socket is never replaced.
  const std::string file = dir.path + "/not-a-socket";
  std::ofstream(file) << "precious";
  Process fourth({binary("XRC_DAEMON"), "--socket", file}, {}, dir.path + "/fourth.log");
  EXPECT_EQ(fourth.wait(30s), 1);
  EXPECT_TRUE(std::ifstream(file).good());
  // A socket directory whose parent does not exist: a clear message.
  Process fifth({binary("XRC_DAEMON"), "--socket", dir.path + "/no/such/dir/s"}, {}, dir.path + "/fifth.log");
  EXPECT_EQ(fifth.wait(30s), 1);
  EXPECT_NE(fifth.output().find("cannot create socket directory"), std::string::npos) << fifth.output();
}

TEST(Startup, SocketDirectoriesOthersControlAreRefused) {
  TempDir dir;
  const std::string foreign = dir.path + "/foreign";
  ASSERT_EQ(::mkdir(foreign.c_str(), 0700), 0);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(foreign.c_str(), 12345, 12345), 0);
    Process daemon({binary("XRC_DAEMON"), "--socket", foreign + "/s"}, {}, dir.path + "/foreign.log");
    EXPECT_EQ(daemon.wait(30s), 1);
    EXPECT_NE(daemon.output().find("belongs to uid 12345"), std::string::npos) << daemon.output();
  }
  const std::string open = dir.path + "/open";
  ASSERT_EQ(::mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  Process daemon({binary("XRC_DAEMON"), "--socket", open + "/s"}, {}, dir.path + "/open.log");
  EXPECT_EQ(daemon.wait(30s), 1);
  EXPECT_NE(daemon.output().find("is writable by others (mode 777) without the sticky bit"), std::string::npos)
      << daemon.output();
  EXPECT_NE(::access((open + "/s").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace xrc::test
