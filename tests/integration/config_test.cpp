// The daemon's configuration file as an operator meets it: a bad file stops it before anything
// starts, SIGHUP reloads what can change and keeps the running settings when the file is bad.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

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

// One of the daemon's threads: its id, name and nice value (/proc/PID/task/TID/stat field 19).
struct ThreadNice {
  pid_t tid;
  std::string name;
  int nice;
};

std::vector<ThreadNice> threadNiceValues(pid_t pid) {
  std::vector<ThreadNice> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i) {
      if (i == 19) {
        out.push_back({pid_t(std::stoi(task.path().filename().string())), stat.substr(open + 1, close - open - 1),
                       std::stoi(field)});
      }
    }
  }
  return out;
}

// One field of the status of the daemon at `socket` (none: no status).
std::optional<int> reportedStatusField(const std::string& socket, int32_t control::DaemonStatus::*field) {
  auto control = control::ControlClient::connect(socket);
  if (!control) return std::nullopt;
  auto status = control.value()->status();
  if (!status) return std::nullopt;
  return status.value().*field;
}

// The RPC thread's nice value as status reports it.
std::optional<int> reportedNice(const std::string& socket) {
  return reportedStatusField(socket, &control::DaemonStatus::rpcThreadNice);
}

// The CPU the RPC thread is kept on as status reports it (-1: several).
std::optional<int> reportedRpcCpu(const std::string& socket) {
  return reportedStatusField(socket, &control::DaemonStatus::rpcThreadCpu);
}

// This test process's nice value, which the daemons it starts inherit.
int ourNice() {
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, 0);
  EXPECT_EQ(errno, 0) << "getpriority";
  return nice;
}

TEST(Config, EveryDaemonThreadRunsAtTheNiceValueAskedForAndStatusSaysSo) {
  TempDir dir;
  const int asked = std::min(ourNice() + 4, 19);  // raising it is allowed to anyone
  Daemon daemon(dir, {"--nice", std::to_string(asked)});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  EXPECT_EQ(reportedNice(daemon.socket()), std::optional<int>(asked));
  // The RPC thread (the main one), the daemon's own threads, and every thread a library started
  // after it; a driver thread may raise its own (Mesa's disk cache runs at 19), none is lower.
  const pid_t pid = daemon.process().pid();
  std::set<std::string> named;
  for (const ThreadNice& t : threadNiceValues(pid)) {
    if (t.tid == pid || t.name.rfind("xrc-", 0) == 0) {
      EXPECT_EQ(t.nice, asked) << t.name;
      named.insert(t.tid == pid ? "main" : t.name);
    }
    EXPECT_GE(t.nice, asked) << t.name;
  }
  for (const char* name : {"main", "xrc-display", "xrc-frames", "xrc-signals"})
    EXPECT_EQ(named.count(name), 1u) << name;
  const CtlResult r = runCtl(dir, {"--socket", daemon.socket(), "status", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("\"rpc_thread_nice\": " + std::to_string(asked) + ","), std::string::npos) << r.output;
}

// A lower nice value than the daemon may take is refused by the kernel: the daemon runs on at the
// nice value it started with, and its log says why. It is started with RLIMIT_NICE 0 and, where
// the test runs as root, without CAP_SYS_NICE, so that the refusal is certain.
TEST(Config, ANiceValueTheDaemonMayNotTakeLeavesItRunningAndSaysWhy) {
  TempDir dir;
  const int ours = ourNice();
  const int asked = std::max(ours - 5, -20);
  ASSERT_LT(asked, ours) << "this test process already runs at the lowest nice value";
  const std::string socket = dir.path + "/daemon.sock";
  std::vector<std::string> argv{"/usr/bin/prlimit", "--nice=0"};
  if (::geteuid() == 0)
    argv.insert(argv.end(), {"/usr/bin/setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"});
  argv.insert(argv.end(),
              {binary("XRC_DAEMON"), "--socket", socket, "--view-size", "256x256", "--nice", std::to_string(asked)});
  Process daemon(argv, {}, dir.path + "/daemon.log");
  ASSERT_TRUE(daemon.waitForOutput("serving", 20s)) << daemon.output();
  EXPECT_NE(daemon.output().find("nice " + std::to_string(asked) + " refused"), std::string::npos) << daemon.output();
  EXPECT_NE(daemon.output().find("running at nice " + std::to_string(ours)), std::string::npos) << daemon.output();
  EXPECT_EQ(reportedNice(socket), std::optional<int>(ours));
  EXPECT_TRUE(daemon.running());
}

// The CPUs a thread may run on, as /proc/PID/task/TID/status lists them ("0-3,6").
std::string cpusAllowedList(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      std::istringstream fields(line.substr(line.find(':') + 1));
      std::string list;
      fields >> list;
      return list;
    }
  }
  return "";
}

std::vector<int> ourCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  }
  return out;
}

TEST(Config, TheRpcThreadAloneIsKeptOnTheCpuAskedForAndServesFrames) {
  TempDir dir;
  const std::vector<int> cpus = ourCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: kept and not kept look the same";
  const int cpu = cpus.back();
  const std::string ours = cpusAllowedList(::getpid(), ::getpid());  // what the daemon inherits
  ASSERT_NE(ours, std::to_string(cpu));
  {
    // Left to the scheduler with `any`, and status says so. A directory of its own: its socket
    // and log are not the kept daemon's.
    TempDir unkeptDir;
    Daemon unkept(unkeptDir, {"--rpc-cpu", "any"});
    ASSERT_TRUE(unkept.ready()) << unkept.process().output();
    EXPECT_EQ(reportedRpcCpu(unkept.socket()), -1);
    EXPECT_EQ(cpusAllowedList(unkept.process().pid(), unkept.process().pid()), ours);
  }
  Daemon daemon(dir, {"--rpc-cpu", std::to_string(cpu)});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  EXPECT_TRUE(daemon.process().waitForOutput("RPC thread kept on CPU " + std::to_string(cpu), 5s))
      << daemon.process().output();
  const pid_t pid = daemon.process().pid();
  EXPECT_EQ(cpusAllowedList(pid, pid), std::to_string(cpu));
  EXPECT_EQ(reportedRpcCpu(daemon.socket()), cpu);
  // Its other threads were started before: they run wherever the daemon may.
  std::set<std::string> seen;
  for (const ThreadNice& t : threadNiceValues(pid)) {
    if (t.tid == pid || t.name.rfind("xrc-", 0) != 0) continue;
    EXPECT_EQ(cpusAllowedList(pid, t.tid), ours) << t.name;
    seen.insert(t.name);
  }
  for (const char* name : {"xrc-display", "xrc-frames", "xrc-signals"}) EXPECT_EQ(seen.count(name), 1u) << name;
  auto demo = startDemo(daemon, dir, DemoSpec{"kept-on-a-cpu", 2, 60});
  EXPECT_TRUE(demo->waitForOutput("connected", 20s)) << demo->output();
  demo->closeStdin();
  EXPECT_EQ(demo->wait(30s), 0) << demo->output();
  EXPECT_TRUE(daemon.process().running());
}

// rpc_cpu auto, the default: the RPC thread is kept on one CPU the daemon may use, and status
// says which. When a busy thread takes that CPU (the daemon runs at nice 19, the busy thread at
// this test's nice value), the daemon moves its RPC thread off it within a few one-second windows,
// logs why and counts it in status, and the client's frames go on.
TEST(Config, TheRpcThreadKeptByDefaultLeavesACpuThatABusyThreadTakes) {
  TempDir dir;
  const std::vector<int> cpus = ourCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: nowhere to move to";
  if (ourNice() > 14) GTEST_SKIP() << "this test runs at nice " << ourNice() << ": the daemon cannot run below it";
  Daemon daemon(dir, {"--nice", "19"});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  ASSERT_TRUE(daemon.process().waitForOutput("rpc_cpu auto", 5s)) << daemon.process().output();
  if (daemon.process().output().find("this kernel does not say how long a thread waits") != std::string::npos) {
    GTEST_SKIP() << "this kernel keeps no per-thread scheduling counts";
  }
  if (daemon.process().output().find("no CPU it may use was at most") != std::string::npos) {
    GTEST_SKIP() << "every CPU was busy as the daemon started (other work on this machine)";
  }
  ASSERT_NE(daemon.process().output().find("RPC thread kept on CPU "), std::string::npos) << daemon.process().output();
  const std::optional<int> first = reportedRpcCpu(daemon.socket());
  ASSERT_TRUE(first && *first >= 0) << daemon.process().output();
  const pid_t pid = daemon.process().pid();
  EXPECT_EQ(cpusAllowedList(pid, pid), std::to_string(*first));
  auto demo = startDemo(daemon, dir, DemoSpec{"beside-a-busy-thread", 2, 900});
  ASSERT_TRUE(demo->waitForOutput("connected", 20s)) << demo->output();
  std::atomic<bool> spinning{true};
  std::atomic<int> pinned{-1};  // the busy thread's sched_setaffinity result
  std::thread busy([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(*first, &set);
    pinned = ::sched_setaffinity(0, sizeof(set), &set);
    while (pinned == 0 && spinning.load(std::memory_order_relaxed)) {
    }
  });
  const bool moved = daemon.waitForStatus([](const control::DaemonStatus& s) { return s.rpcThreadMoves >= 1; }, 10s);
  spinning = false;
  busy.join();
  ASSERT_EQ(pinned.load(), 0) << "the busy thread could not be kept on CPU " << *first;
  ASSERT_TRUE(moved) << daemon.process().output();
  const std::optional<int> after = reportedRpcCpu(daemon.socket());
  ASSERT_TRUE(after);
  EXPECT_NE(*after, *first);
  const std::string log = daemon.process().output();
  const std::string from = "CPU " + std::to_string(*first);
  EXPECT_TRUE(log.find("RPC thread moved from " + from + " to CPU " + std::to_string(*after) + ": it waited") !=
                  std::string::npos ||
              (*after == -1 && log.find("RPC thread left to the scheduler: it waited") != std::string::npos))
      << log;
  EXPECT_NE(log.find("turns for " + from), std::string::npos) << log;
  const CtlResult r = runCtl(dir, {"--socket", daemon.socket(), "status", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"("rpc_thread_moves": [1-9])"))) << r.output;
  EXPECT_TRUE(demo->waitForOutput("frames 900 ok", 30s)) << demo->output();
  demo->closeStdin();
  EXPECT_EQ(demo->wait(30s), 0) << demo->output();
  EXPECT_TRUE(daemon.process().running());
}

TEST(Config, AnRpcCpuTheDaemonMayNotUseIsRefusedBeforeAnythingStarts) {
  TempDir dir;
  const std::vector<int> cpus = ourCpus();
  int outside = 0;
  while (std::find(cpus.begin(), cpus.end(), outside) != cpus.end()) ++outside;
  const std::string socket = dir.path + "/daemon.sock";
  Process daemon(
      {binary("XRC_DAEMON"), "--socket", socket, "--view-size", "256x256", "--rpc-cpu", std::to_string(outside)}, {},
      dir.path + "/daemon.log");
  EXPECT_EQ(daemon.wait(30s), 2) << daemon.output();
  EXPECT_NE(daemon.output().find("rpc_cpu: CPU " + std::to_string(outside) + " is not one this process may run on ("),
            std::string::npos)
      << daemon.output();
  EXPECT_FALSE(std::filesystem::exists(socket));
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
