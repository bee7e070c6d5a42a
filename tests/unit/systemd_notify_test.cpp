#include <gtest/gtest.h>

#include "compositor/health_monitor.hpp"
#include "log.hpp"

#include "platform/systemd.hpp"

namespace xrc::platform {

using xrc::FrameLoopHealth;
using xrc::statusLine;
namespace {

TEST(SystemdNotify, MessagesFollowSdNotifyFormat) {
  EXPECT_EQ(readyMessage("serving"), "READY=1\nSTATUS=serving");
  EXPECT_EQ(statusMessage("2 clients"), "STATUS=2 clients");
  EXPECT_EQ(stoppingMessage().rfind("STOPPING=1\n", 0), 0u);
}

TEST(SystemdNotify, WithoutSystemdNothingIsActivatedOrSent) {
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("NOTIFY_SOCKET");
  auto activated = takeActivatedSocket();
  ASSERT_TRUE(activated);
  EXPECT_FALSE(activated.value().has_value());
  EXPECT_FALSE(notify(readyMessage("x")));
}

TEST(SystemdNotify, WatchdogAndStatusMessages) {
  EXPECT_EQ(watchdogMessage(), "WATCHDOG=1");
  EXPECT_EQ(statusMessage(statusLine(1, 90.04)), "STATUS=serving 1 client, display 90.0 fps");
  EXPECT_EQ(statusLine(3, 0), "serving 3 clients, display 0.0 fps");
  ::unsetenv("WATCHDOG_USEC");
  EXPECT_FALSE(watchdogInterval().has_value());
  ::setenv("WATCHDOG_USEC", "400000", 1);
  ASSERT_TRUE(watchdogInterval().has_value());
  EXPECT_EQ(watchdogInterval()->count(), 400000);
  ::unsetenv("WATCHDOG_USEC");
}

TEST(JournalLogging, ClientMessagesCarryTheirClientAsFields) {
  const xrc::log::ClientFields client{7, 4242, "hello_xr"};
  EXPECT_EQ(xrc::log::journalFields(xrc::log::Level::warn, "client 7 slow", &client),
            (std::vector<std::string>{"MESSAGE=client 7 slow", "PRIORITY=4", "SYSLOG_IDENTIFIER=xr-compositord",
                                      "XRC_CLIENT_ID=7", "XRC_CLIENT_PID=4242", "XRC_CLIENT_NAME=hello_xr"}));
  EXPECT_EQ(xrc::log::journalFields(xrc::log::Level::error, "GPU lost", nullptr),
            (std::vector<std::string>{"MESSAGE=GPU lost", "PRIORITY=3", "SYSLOG_IDENTIFIER=xr-compositord"}));
}

TEST(FrameLoopHealth, HealthyOnlyWhileFramesAdvanceAndTheWorkerIsNotStuck) {
  FrameLoopHealth h;
  EXPECT_TRUE(h.update(10, 0, 1000));      // first look: nothing to compare with yet
  EXPECT_TRUE(h.update(11, 0, 1000));      // frames advanced
  EXPECT_FALSE(h.update(11, 0, 1000));     // display stalled
  EXPECT_TRUE(h.update(12, 999, 1000));    // a job running, not yet stuck
  EXPECT_FALSE(h.update(13, 1000, 1000));  // the worker is stuck in one job
}

}  // namespace
}  // namespace xrc::platform
