#include "harness.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <vulkan/vulkan.h>

#include "pattern.hpp"

namespace xrc::test {

std::string binary(const char* envName) {
  const char* value = std::getenv(envName);
  return value ? value : "";
}

Daemon::Daemon(const TempDir& dir, std::vector<std::string> extraArgs, std::map<std::string, std::string> env) {
  socket_ = dir.path + "/daemon.sock";
  std::vector<std::string> argv{binary("XRC_DAEMON"), "--socket", socket_, "--view-size", "256x256"};
  argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
  process_ = std::make_unique<Process>(argv, env, dir.path + "/daemon.log");
  ready_ = process_->waitForOutput("serving", std::chrono::seconds(20));
}

std::unique_ptr<control::ControlClient> Daemon::control() {
  auto c = control::ControlClient::connect(socket_);
  return c ? std::move(c).value() : nullptr;
}

int Daemon::fdCount() const {
  int count = 0;
  const std::string dir = "/proc/" + std::to_string(process_->pid()) + "/fd";
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++count;
  return count;
}

bool Daemon::waitForStatus(const std::function<bool(const control::DaemonStatus&)>& predicate,
                           std::chrono::milliseconds timeout) {
  auto c = control();
  if (!c) return false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto s = c->status();
    if (s && predicate(s.value())) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::unique_ptr<Process> startDemo(const Daemon& daemon, const TempDir& dir, const DemoSpec& spec,
                                   std::map<std::string, std::string> env) {
  std::vector<std::string> argv{binary("XRC_DEMO"),
                                "--socket",
                                daemon.socket(),
                                "--name",
                                spec.name,
                                "--seed",
                                std::to_string(spec.seed),
                                "--frames",
                                std::to_string(spec.frames),
                                "--stereo",
                                spec.stereo,
                                "--mips",
                                std::to_string(spec.mips),
                                "--hold"};
  if (spec.depth) argv.push_back("--depth");
  auto option = [&](const char* flag, uint64_t value) {
    argv.push_back(flag);
    argv.push_back(std::to_string(value));
  };
  if (spec.overlay) option("--overlay", *spec.overlay);
  if (spec.alpha != 255) option("--alpha", spec.alpha);
  if (spec.workMs > 0) option("--work-ms", spec.workMs);
  if (spec.lateEvery > 0) option("--late-every", spec.lateEvery);
  if (spec.stallAfter > 0) option("--stall-after", spec.stallAfter);
  if (spec.stats) argv.push_back("--stats");
  if (!spec.projection) argv.push_back("--no-projection");
  if (spec.quadPx > 0) {
    option("--quad-px", spec.quadPx);
    option("--quad-x", spec.quadX);
    option("--quad-y", spec.quadY);
  }
  return std::make_unique<Process>(argv, env, dir.path + "/" + spec.name + ".log", true);
}

const control::ClientStatus* findClient(const control::DaemonStatus& status, uint32_t id) {
  for (const auto& c : status.clients) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

CtlResult runCtl(const TempDir& dir, const std::vector<std::string>& args, std::map<std::string, std::string> env) {
  std::vector<std::string> argv{binary("XRC_CTL")};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, std::move(env), dir.path + "/ctl.log");
  CtlResult result;
  result.exitCode = p.wait(std::chrono::seconds(30));
  result.output = p.output();
  return result;
}

bool parseIdentity(const std::string& output, DemoIdentity& out) {
  auto pos = output.find("client ");
  if (pos == std::string::npos) return false;
  std::istringstream line(output.substr(pos, output.find('\n', pos) - pos));
  std::string word, sync, swapchains;
  line >> word >> out.clientId >> word >> sync >> swapchains;
  if (sync.rfind("sync=", 0) != 0 || swapchains.rfind("swapchains=", 0) != 0) return false;
  out.syncMode = sync.substr(5);
  std::istringstream ids(swapchains.substr(11));
  std::string id;
  out.swapchains.clear();
  while (std::getline(ids, id, ',')) out.swapchains.push_back(uint32_t(std::stoul(id)));
  return !out.swapchains.empty();
}

size_t countPatternMismatches(const control::Pixels& pixels, uint32_t seed, uint32_t swapchainIndex, uint64_t ordinal,
                              std::string* first) {
  const bool depth = pixels.format == VK_FORMAT_D32_SFLOAT;
  size_t expectedSize = 0;
  for (uint32_t mip = 0; mip < pixels.mips; ++mip) {
    expectedSize += size_t(std::max(1u, pixels.width >> mip)) * std::max(1u, pixels.height >> mip) * pixels.layers * 4;
  }
  if (pixels.data.size() != expectedSize) {
    if (first) *first = "size " + std::to_string(pixels.data.size()) + " != " + std::to_string(expectedSize);
    return expectedSize;
  }
  size_t mismatches = 0;
  size_t offset = 0;
  for (uint32_t mip = 0; mip < pixels.mips; ++mip) {
    const uint32_t w = std::max(1u, pixels.width >> mip), h = std::max(1u, pixels.height >> mip);
    for (uint32_t layer = 0; layer < pixels.layers; ++layer) {
      const pattern::Key key{seed, swapchainIndex, ordinal, layer, mip};
      for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
          uint32_t got;
          std::memcpy(&got, &pixels.data[offset + (size_t(y) * w + x) * 4], 4);
          uint32_t want;
          if (depth) {
            const float d = pattern::depth(key, x, y);
            std::memcpy(&want, &d, 4);
          } else {
            want = pattern::color(key, x, y);
          }
          if (got != want) {
            if (mismatches == 0 && first) {
              std::ostringstream msg;
              msg << "mip " << mip << " layer " << layer << " (" << x << "," << y << "): got 0x" << std::hex << got
                  << " want 0x" << want;
              *first = msg.str();
            }
            ++mismatches;
          }
        }
      }
      offset += size_t(w) * h * 4;
    }
  }
  return mismatches;
}

std::map<std::string, std::string> validationEnv() {
  return {{"VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation"},
          {"VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"}};
}

}  // namespace xrc::test
