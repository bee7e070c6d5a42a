// Configuration files: parsing, validation with file:line messages, layering, reload diffs.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "config/daemon_config.hpp"

namespace xrc {
namespace {

// A boolean key: its default; the other value read; a value of another type (`badValue`) refused
// with the key's name and place, the configuration left as it was; the key named as changed.
void expectBooleanKey(const std::string& key, bool DaemonConfig::*member, bool byDefault, const std::string& badValue) {
  DaemonConfig c;
  EXPECT_EQ(c.*member, byDefault) << key;
  const std::string other = byDefault ? "false" : "true";
  ASSERT_TRUE(applyToml(key + " = " + other + "\n", "test.toml", c)) << key;
  EXPECT_EQ(c.*member, !byDefault) << key;
  auto s = applyToml(key + " = " + badValue + "\n", "test.toml", c);
  ASSERT_FALSE(s) << key;
  EXPECT_NE(s.error().message.find("test.toml:1:"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("'" + key + "' must be true or false"), std::string::npos) << s.error().message;
  EXPECT_EQ(c.*member, !byDefault) << key << ": errors leave the configuration as it was";
  DaemonConfig changed = c;
  changed.*member = byDefault;
  EXPECT_EQ(changedKeys(c, changed), std::vector<std::string>{key});
}

// An integer key within 0..`max`: its default; `good` read; max + 1 and -1 refused, naming the key,
// its place and the range; a value of another type (`badValue`) refused; the configuration left
// as it was; the key named as changed.
void expectBoundedIntegerKey(const std::string& key, int64_t DaemonConfig::*member, int64_t byDefault, int64_t good,
                             int64_t max, const std::string& badValue) {
  DaemonConfig c;
  EXPECT_EQ(c.*member, byDefault) << key;
  ASSERT_TRUE(applyToml(key + " = " + std::to_string(good) + "\n", "test.toml", c)) << key;
  EXPECT_EQ(c.*member, good) << key;
  for (int64_t bad : {max + 1, int64_t(-1)}) {
    auto s = applyToml(key + " = " + std::to_string(bad) + "\n", "test.toml", c);
    ASSERT_FALSE(s) << key << " = " << bad;
    EXPECT_NE(s.error().message.find("test.toml:1: " + key + " must be within 0.." + std::to_string(max)),
              std::string::npos)
        << s.error().message;
  }
  auto s = applyToml(key + " = " + badValue + "\n", "test.toml", c);
  ASSERT_FALSE(s) << key;
  EXPECT_NE(s.error().message.find("test.toml:1:"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("'" + key + "' must be an integer"), std::string::npos) << s.error().message;
  EXPECT_EQ(c.*member, good) << key << ": errors leave the configuration as it was";
  DaemonConfig changed = c;
  changed.*member = byDefault == good ? good + 1 : byDefault;
  EXPECT_EQ(changedKeys(c, changed), std::vector<std::string>{key});
}

TEST(DaemonConfig, AppliesEveryKnownKey) {
  DaemonConfig c;
  ASSERT_TRUE(applyToml(R"(
backend = "headless"
socket = "/run/xr/s"
refresh_hz = 120
log_level = "debug"
view_size = "800x600"
sync_mode = "host"
device_uuid = "abc"
shutdown_grace_ms = 250
)",
                        "c.toml", c));
  EXPECT_EQ(c.socket, "/run/xr/s");
  EXPECT_EQ(c.refreshHz, 120.0);  // an integer is fine where a number is wanted
  EXPECT_EQ(c.logLevel, "debug");
  EXPECT_EQ(c.viewSize, "800x600");
  EXPECT_EQ(c.syncMode, "host");
  EXPECT_EQ(c.deviceUuid, "abc");
  EXPECT_EQ(c.shutdownGraceMs, 250);
}

// The keys config.example.toml documents are the ones the unknown-key error offers instead.
TEST(DaemonConfig, AnUnknownKeyErrorOffersTheKeysTheExampleConfigDocuments) {
  std::ifstream example(XRC_EXAMPLE_CONFIG);
  ASSERT_TRUE(example) << XRC_EXAMPLE_CONFIG;
  std::set<std::string> documented;
  const std::regex key(R"(^# ([a-z_]+) *=)");
  for (std::string line; std::getline(example, line);) {
    std::smatch m;
    if (std::regex_search(line, m, key)) documented.insert(m[1].str());
  }
  EXPECT_GT(documented.size(), 20u);

  DaemonConfig c;
  auto s = applyToml("refresh = 90\n", "x.toml", c);
  ASSERT_FALSE(s);
  // "... (known: a, b, ..., or a limit: c, d, ...)"
  std::string known = s.error().message.substr(s.error().message.find("(known: ") + 8);
  known = std::regex_replace(known, std::regex(R"(\)$|or a limit: )"), "");
  std::set<std::string> offered;
  const std::regex name(R"([a-z_]+)");
  for (auto it = std::sregex_iterator(known.begin(), known.end(), name); it != std::sregex_iterator(); ++it) {
    offered.insert(it->str());
  }
  EXPECT_EQ(offered, documented) << s.error().message;
}

TEST(DaemonConfig, ErrorsNameTheFileTheLineAndTheKeyAndChangeNothing) {
  DaemonConfig c;
  const DaemonConfig before = c;
  auto s = applyToml("log_level = \"debug\"\n\nrefresh = 90\n", "/etc/x.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("/etc/x.toml:3: unknown key 'refresh'"), std::string::npos) << s.error().message;
  EXPECT_EQ(c, before);  // log_level on line 1 was not applied either

  s = applyToml("refresh_hz = \"fast\"\n", "f.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("f.toml:1: 'refresh_hz' must be a number"), std::string::npos) << s.error().message;

  s = applyToml("shutdown_grace_ms = 1.5\n", "f.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("must be an integer"), std::string::npos);

  s = applyToml("\nrefresh_hz = 5000\n", "f.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("f.toml:2: refresh_hz must be within 1..1000 (got 5000)"), std::string::npos)
      << s.error().message;

  s = applyToml("sync_mode = \"psychic\"\n", "f.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("sync_mode must be auto, host or binary"), std::string::npos);

  s = applyToml("view_size = \"0x600\"\n", "f.toml", c);
  ASSERT_FALSE(s);

  s = applyToml("a = \n", "broken.toml", c);  // not TOML
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("broken.toml:1:"), std::string::npos) << s.error().message;
  EXPECT_EQ(c, before);
}

TEST(DaemonConfig, CommandLineNamesInValidation) {
  DaemonConfig c;
  c.refreshHz = 0;
  auto s = validateConfig(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--refresh-hz must be within 1..1000"), std::string::npos) << s.error().message;
  c = DaemonConfig{};
  c.shutdownGraceMs = -1;
  EXPECT_FALSE(validateConfig(c));
  EXPECT_TRUE(validateConfig(DaemonConfig{}));
}

TEST(DaemonConfig, BackendsAreHeadlessWindowAndOpenXr) {
  DaemonConfig c;
  c.backend = "openxr";
  EXPECT_TRUE(validateConfig(c));
  c.backend = "window";
  EXPECT_TRUE(validateConfig(c));
  c.backend = "drm";
  auto s = validateConfig(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("unknown backend 'drm' (available: headless, window, openxr)"), std::string::npos)
      << s.error().message;
}

TEST(DaemonConfig, QueuePriorityIsOneOfVulkansFour) {
  DaemonConfig c;
  EXPECT_EQ(c.queuePriority, "high");
  ASSERT_TRUE(applyToml("queue_priority = \"medium\"\n", "test.toml", c));
  EXPECT_EQ(c.queuePriority, "medium");
  auto s = applyToml("queue_priority = \"urgent\"\n", "test.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("test.toml:1: queue_priority must be low, medium, high or realtime (got 'urgent')"),
            std::string::npos)
      << s.error().message;
  EXPECT_EQ(c.queuePriority, "medium");
  DaemonConfig other = c;
  other.queuePriority = "high";
  EXPECT_EQ(changedKeys(c, other), std::vector<std::string>{"queue_priority"});
}

TEST(DaemonConfig, NiceIsZeroByDefaultWithinLinuxsRangeAndNeedsARestart) {
  DaemonConfig c;
  EXPECT_EQ(c.nice, 0);
  ASSERT_TRUE(applyToml("nice = 5\n", "test.toml", c));
  EXPECT_EQ(c.nice, 5);
  ASSERT_TRUE(applyToml("nice = -20\n", "test.toml", c));
  ASSERT_TRUE(applyToml("nice = 19\n", "test.toml", c));
  for (const char* bad : {"nice = -21\n", "nice = 20\n"}) {
    auto s = applyToml(bad, "test.toml", c);
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().message.find("test.toml:1: nice must be within -20..19"), std::string::npos)
        << s.error().message;
  }
  EXPECT_EQ(c.nice, 19);  // a refused value changes nothing
  c.nice = 40;
  auto s = validateConfig(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--nice must be within -20..19 (got 40)"), std::string::npos) << s.error().message;
  DaemonConfig other;
  other.nice = -10;
  EXPECT_EQ(changedKeys(DaemonConfig{}, other), std::vector<std::string>{"nice"});
}

TEST(DaemonConfig, RpcCpuIsAutoByDefaultAnyOrACpuNumberAndNeedsARestart) {
  DaemonConfig c;
  EXPECT_EQ(c.rpcCpu, kRpcCpuAuto);
  ASSERT_TRUE(applyToml("rpc_cpu = 3\n", "test.toml", c));
  EXPECT_EQ(c.rpcCpu, 3);
  ASSERT_TRUE(applyToml("rpc_cpu = \"any\"\n", "test.toml", c));
  EXPECT_EQ(c.rpcCpu, kRpcCpuAny);
  ASSERT_TRUE(applyToml("rpc_cpu = \"auto\"\n", "test.toml", c));
  EXPECT_EQ(c.rpcCpu, kRpcCpuAuto);
  ASSERT_TRUE(applyToml("rpc_cpu = -1\n", "test.toml", c));  // any, as before "any" was a word
  EXPECT_EQ(c.rpcCpu, kRpcCpuAny);
  ASSERT_TRUE(applyToml("rpc_cpu = \"7\"\n", "test.toml", c));
  EXPECT_EQ(c.rpcCpu, 7);
  ASSERT_TRUE(applyToml("rpc_cpu = 1023\n", "test.toml", c));
  for (const char* bad :
       {"rpc_cpu = -2\n", "rpc_cpu = 1024\n", "rpc_cpu = \"sometimes\"\n", "rpc_cpu = \"3x\"\n", "rpc_cpu = \"\"\n"}) {
    auto s = applyToml(bad, "test.toml", c);
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().message.find("test.toml:1: rpc_cpu must be auto, any or a CPU number below 1024"),
              std::string::npos)
        << s.error().message;
  }
  auto wrongType = applyToml("rpc_cpu = 1.5\n", "test.toml", c);
  ASSERT_FALSE(wrongType);
  EXPECT_NE(wrongType.error().message.find("'rpc_cpu' must be \"auto\", \"any\" or an integer"), std::string::npos)
      << wrongType.error().message;
  EXPECT_EQ(c.rpcCpu, 1023);  // a refused value changes nothing
  c.rpcCpu = 5000;
  auto s = validateConfig(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--rpc-cpu must be auto, any or a CPU number below 1024 (got 5000)"),
            std::string::npos)
      << s.error().message;
  EXPECT_EQ(parseRpcCpu("auto").value(), kRpcCpuAuto);
  EXPECT_EQ(parseRpcCpu("12").value(), 12);
  EXPECT_EQ(parseRpcCpu("x").error().message, "must be auto, any or a CPU number below 1024 (got 'x')");
  DaemonConfig other;
  other.rpcCpu = 2;
  EXPECT_EQ(changedKeys(DaemonConfig{}, other), std::vector<std::string>{"rpc_cpu"});
}

TEST(DaemonConfig, HostCopiesAreAutoUpTo4MibAndBoundedAt64Mib) {
  DaemonConfig c;
  EXPECT_EQ(c.hostCopies, "auto");
  EXPECT_EQ(c.hostCopyMaxKib, 4096);
  ASSERT_TRUE(applyToml("host_copies = \"off\"\nhost_copy_max_kib = 0\n", "test.toml", c));
  EXPECT_EQ(c.hostCopies, "off");
  EXPECT_EQ(c.hostCopyMaxKib, 0);
  ASSERT_TRUE(applyToml("host_copies = \"auto\"\nhost_copy_max_kib = 65536\n", "test.toml", c));
  EXPECT_EQ(c.hostCopyMaxKib, 65536);
  for (const char* bad : {"host_copy_max_kib = 65537\n", "host_copy_max_kib = -1\n"}) {
    auto s = applyToml(bad, "test.toml", c);
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().message.find("test.toml:1: host_copy_max_kib must be within 0..65536"), std::string::npos)
        << s.error().message;
  }
  auto s = applyToml("host_copy_max_kib = \"4 MiB\"\n", "test.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("'host_copy_max_kib' must be an integer"), std::string::npos) << s.error().message;
  s = applyToml("host_copies = \"always\"\n", "test.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("host_copies must be auto or off (got 'always')"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(c.hostCopies, "auto");  // errors leave the configuration as it was
  EXPECT_EQ(c.hostCopyMaxKib, 65536);
  DaemonConfig other = c;
  other.hostCopyMaxKib = 4096;
  EXPECT_EQ(changedKeys(c, other), std::vector<std::string>{"host_copy_max_kib"});
}

TEST(DaemonConfig, CopyBatchIsOffByDefaultAndAtMostADisplayPeriodAt90Hz) {
  expectBoundedIntegerKey("copy_batch_us", &DaemonConfig::copyBatchUs, 0, 3000, 11000, "\"3 ms\"");
}

TEST(DaemonConfig, CopyBatchCopiesPerSubmissionIsOffByDefaultAndBounded) {
  expectBoundedIntegerKey("copy_batch_copies_per_submission", &DaemonConfig::copyBatchCopiesPerSubmission, 0, 8, 256,
                          "true");
}

TEST(DaemonConfig, CopyBatchBeforeLatchIs2msByDefaultAndAtMostADisplayPeriodAt90Hz) {
  expectBoundedIntegerKey("copy_batch_before_latch_us", &DaemonConfig::copyBatchBeforeLatchUs, 2000, 1500, 11000,
                          "2.5");
  // The command line's values are checked too, naming the option.
  DaemonConfig c;
  c.copyBatchBeforeLatchUs = -5;
  auto s = validateConfig(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--copy-batch-before-latch-us must be within 0..11000 (got -5)"), std::string::npos)
      << s.error().message;
}

TEST(DaemonConfig, CopyBatchBeforeLatchMaxIsOffByDefaultAndAtMostADisplayPeriodAt90Hz) {
  expectBoundedIntegerKey("copy_batch_before_latch_max_us", &DaemonConfig::copyBatchBeforeLatchMaxUs, 0, 6000, 11000,
                          "\"long\"");
}

TEST(DaemonConfig, OpenXrOverlayIsABoolean) {
  expectBooleanKey("openxr_overlay", &DaemonConfig::openxrOverlay, false, "\"yes\"");
}

TEST(DaemonConfig, ReprojectionIsABooleanOnByDefault) {
  expectBooleanKey("reprojection", &DaemonConfig::reprojection, true, "\"off\"");
}

TEST(DaemonConfig, HeadMotionIsStillOrSway) {
  DaemonConfig c;
  EXPECT_EQ(c.headMotion, "still");
  ASSERT_TRUE(applyToml("head_motion = \"sway\"\n", "test.toml", c));
  EXPECT_EQ(c.headMotion, "sway");
  auto s = applyToml("head_motion = \"spin\"\n", "test.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("head_motion must be still or sway (got 'spin')"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(c.headMotion, "sway");  // unchanged by the bad file
}

TEST(DaemonConfig, ComposeIsOnReadOrEveryFrame) {
  DaemonConfig c;
  EXPECT_EQ(c.compose, "on-read");
  ASSERT_TRUE(applyToml("compose = \"every-frame\"\n", "test.toml", c));
  EXPECT_EQ(c.compose, "every-frame");
  auto s = applyToml("compose = \"never\"\n", "test.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("compose must be on-read or every-frame (got 'never')"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(c.compose, "every-frame");  // unchanged by the bad file
  DaemonConfig other = c;
  other.compose = "on-read";
  EXPECT_EQ(changedKeys(c, other), std::vector<std::string>{"compose"});
}

TEST(DaemonConfig, MirrorIsNoneOrWindowForEitherDisplay) {
  DaemonConfig c;
  EXPECT_EQ(c.mirror, "none");
  ASSERT_TRUE(applyToml("mirror = \"window\"\n", "test.toml", c));
  EXPECT_EQ(c.mirror, "window");
  auto s = applyToml("mirror = \"screen\"\n", "test.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("mirror must be none or window (got 'screen')"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(c.mirror, "window");  // unchanged by the bad file
  // What the openxr backend sends its runtime is mirrored too.
  ASSERT_TRUE(applyToml("backend = \"openxr\"\n", "test.toml", c));
  EXPECT_EQ(c.backend, "openxr");
  EXPECT_EQ(c.mirror, "window");
  DaemonConfig other = c;
  other.mirror = "none";
  EXPECT_EQ(changedKeys(c, other), std::vector<std::string>{"mirror"});
}

TEST(DaemonConfig, FilesLayerInOrderAndMissingOnesAreSkipped) {
  char dirTemplate[] = "/tmp/xrc-config-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  std::ofstream(dir + "/system.toml") << "refresh_hz = 60\nlog_level = \"warn\"\n";
  std::ofstream(dir + "/user.toml") << "log_level = \"debug\"\n";
  auto c = loadConfigFiles({dir + "/system.toml", dir + "/missing.toml", dir + "/user.toml"}, DaemonConfig{});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c.value().refreshHz, 60.0);
  EXPECT_EQ(c.value().logLevel, "debug");  // the user's file wins
  std::ofstream(dir + "/user.toml") << "log_level = 3\n";
  auto bad = loadConfigFiles({dir + "/system.toml", dir + "/user.toml"}, DaemonConfig{});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find(dir + "/user.toml:1"), std::string::npos) << bad.error().message;
  auto notAFile = loadConfigFiles({dir}, DaemonConfig{});  // a directory where a file should be
  ASSERT_FALSE(notAFile);
  EXPECT_NE(notAFile.error().message.find("is not a regular file"), std::string::npos);
  std::remove((dir + "/system.toml").c_str());
  std::remove((dir + "/user.toml").c_str());
  ::rmdir(dir.c_str());
}

TEST(DaemonConfig, ChangedKeysForReloadMessages) {
  DaemonConfig a, b;
  EXPECT_TRUE(changedKeys(a, b).empty());
  b.logLevel = "debug";
  b.viewSize = "10x10";
  EXPECT_EQ(changedKeys(a, b), (std::vector<std::string>{"log_level", "view_size"}));
}

}  // namespace
}  // namespace xrc
