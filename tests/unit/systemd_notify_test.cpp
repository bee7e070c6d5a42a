#include <gtest/gtest.h>

#include "platform/systemd.hpp"

namespace xrc::platform {
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

}  // namespace
}  // namespace xrc::platform
