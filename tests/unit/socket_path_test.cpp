#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "xrc/socket_path.hpp"

namespace xrc {
namespace {

TEST(UnixSocketAddress, PathThatFitsIsCopiedWhole) {
  auto address = unixSocketAddress("/run/user/1000/xr-compositor/socket");
  ASSERT_TRUE(address) << address.error().describe();
  EXPECT_EQ(address.value().sun_family, AF_UNIX);
  EXPECT_STREQ(address.value().sun_path, "/run/user/1000/xr-compositor/socket");
  // The longest that fits leaves room for the terminating zero.
  const std::string longest(sizeof(sockaddr_un::sun_path) - 1, 'x');
  auto edge = unixSocketAddress(longest);
  ASSERT_TRUE(edge) << edge.error().describe();
  EXPECT_EQ(std::strlen(edge.value().sun_path), longest.size());
}

TEST(UnixSocketAddress, EmptyOrTooLongIsAnErrorNotATruncation) {
  for (const std::string& path : {std::string(), std::string(sizeof(sockaddr_un::sun_path), 'x')}) {
    auto address = unixSocketAddress(path);
    ASSERT_FALSE(address) << "'" << path << "' accepted";
    EXPECT_EQ(address.error().code, ErrorCode::invalidArgument);
  }
}

}  // namespace
}  // namespace xrc
