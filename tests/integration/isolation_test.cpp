// What one client can do to the daemon with resources and text, and what it must not: exhaust
// the daemon's fds (the listener recovers once they are free) or smuggle control characters and
// broken UTF-8 into the log, status tables and JSON. A rendering bystander checks that the others
// keep being served.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;

// A connection that never says anything; none once the daemon's backlog is full (non-blocking:
// a blocking connect() would wait for the daemon to accept).
UniqueFd idleConnection(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) return UniqueFd();
  return fd;
}

TEST(Isolation, TheListenerRecoversFromFdExhaustion) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  DemoSpec bystander{"bystander", 3, 1'000'000};
  auto demo = startDemo(daemon, dir, bystander);
  ASSERT_TRUE(demo->waitForOutput("connected", 30s)) << demo->output();
  // Few fds left to the daemon: its limit just above what it holds now.
  const int held = daemon.fdCount();
  ASSERT_GT(held, 0);
  rlimit limit{rlim_t(held + 24), rlim_t(held + 24)};
  ASSERT_EQ(::prlimit(daemon.process().pid(), RLIMIT_NOFILE, &limit, nullptr), 0) << std::strerror(errno);

  // Idle connections until the daemon cannot accept any more (the kernel still completes the
  // connects into the backlog).
  std::vector<UniqueFd> idle;
  auto control = daemon.control();
  ASSERT_TRUE(control);
  for (int i = 0; i < 200; ++i) {
    auto fd = idleConnection(daemon.socket());
    if (fd.valid()) idle.push_back(std::move(fd));
  }
  // Polled on the connection made before: a new one would wait in the backlog.
  Result<control::DaemonStatus> before = makeError(ErrorCode::internal, "no status yet");
  for (int i = 0; i < 500; ++i) {
    before = control->status();
    if (before && before.value().acceptFailures > 0) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(before);
  ASSERT_GT(before.value().acceptFailures, 0u) << "the daemon never ran out of fds";
  // The bystander renders on meanwhile.
  const auto* b0 = findClient(before.value(), "bystander");
  ASSERT_NE(b0, nullptr);
  std::this_thread::sleep_for(500ms);

  // Free the fds: new clients are served again, within the listener's back-off.
  idle.clear();
  ASSERT_TRUE(daemon.waitForStatus([](const control::DaemonStatus& s) { return s.clients.size() == 1; }, 10s));
  auto fresh = daemon.control();
  ASSERT_TRUE(fresh) << "a new connection after the fds were freed";
  // The bystander is still there and still displayed (progress, not a rate: sanitizer builds
  // render slowly).
  const uint64_t shownBefore = b0->framesDisplayed;
  EXPECT_TRUE(daemon.waitForStatus(
      [&](const control::DaemonStatus& s) {
        const auto* b = findClient(s, "bystander");
        return b != nullptr && b->framesDisplayed > shownBefore + 5;
      },
      20s))
      << "the bystander kept being displayed";
  // One warning for the burst, not one per attempt.
  const std::string log = daemon.process().output();
  size_t warnings = 0;
  for (size_t at = log.find("accepting connections failed"); at != std::string::npos;
       at = log.find("accepting connections failed", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << log;
  demo->closeStdin();
  demo->signal(SIGTERM);
  demo->wait(10s);
}

// Names that would split a UTF-8 character at the 128-byte cut, forge a log line or steer the
// operator's terminal are kept as valid UTF-8 with their control characters written out.
TEST(Isolation, HostileClientNamesArePrintedSafely) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  std::string french;
  while (french.size() < 143) french += "é";
  french.resize(143);
  const std::vector<std::string> names{french, "forged\nxr-compositord [error] fake", "\x1b[31mred\x1b]0;title\x07"};
  std::vector<std::unique_ptr<Process>> demos;
  for (size_t i = 0; i < names.size(); ++i) {
    DemoSpec spec{names[i], uint32_t(i + 1), 1'000'000};
    demos.push_back(startDemo(daemon, dir, spec));
    ASSERT_TRUE(demos.back()->waitForOutput("connected", 30s)) << demos.back()->output();
  }
  auto ctl = runCtl(dir, {"--socket", daemon.socket(), "status", "--json"});
  ASSERT_EQ(ctl.exitCode, 0) << ctl.output;
  const auto json = nlohmann::json::parse(ctl.output.substr(ctl.output.find('{')), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << ctl.output;
  std::vector<std::string> shown;
  for (const auto& c : json["clients"]) shown.push_back(c["name"].get<std::string>());
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0].size(), 128u);
  EXPECT_EQ(shown[0], french.substr(0, 128));
  EXPECT_EQ(shown[1], "forged\\nxr-compositord [error] fake");
  EXPECT_EQ(shown[2], "\\x1b[31mred\\x1b]0;title\\x07");
  auto table = runCtl(dir, {"--socket", daemon.socket(), "status"});
  ASSERT_EQ(table.exitCode, 0) << table.output;
  EXPECT_EQ(table.output.find('\x1b'), std::string::npos);
  const std::string log = daemon.process().output();
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  EXPECT_EQ(log.find("\nxr-compositord [error] fake"), std::string::npos) << "a forged log line";
  for (auto& d : demos) {
    d->closeStdin();
    d->signal(SIGTERM);
    d->wait(10s);
  }
}

// The socket the daemon binds itself is its owner's only, whatever the umask it was started with.
TEST(Isolation, TheSocketIsTheOwnersOnlyWhateverTheUmask) {
  TempDir dir;
  const mode_t old = ::umask(0);
  Daemon daemon(dir);
  ::umask(old);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  struct stat st {};
  ASSERT_EQ(::stat(daemon.socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace xrc::test
