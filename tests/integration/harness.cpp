#include "harness.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>
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
  if (spec.blendMode != "opaque") {
    argv.push_back("--blend-mode");
    argv.push_back(spec.blendMode);
  }
  if (!spec.projection) argv.push_back("--no-projection");
  if (!spec.shape.empty()) {
    argv.push_back("--shape");
    argv.push_back(spec.shape);
    argv.push_back("--shape-radius");
    argv.push_back(std::to_string(spec.shapeRadius));
  }
  using Flag = std::pair<const char*, const std::vector<float>*>;
  for (const auto& [flag, values] : {Flag{"--color-scale", &spec.colorScale}, Flag{"--color-bias", &spec.colorBias}}) {
    if (values->empty()) continue;
    argv.push_back(flag);
    for (float v : *values) argv.push_back(fmt::format("{}", v));
  }
  if (spec.viewYaw != 0) argv.insert(argv.end(), {"--view-yaw", fmt::format("{}", spec.viewYaw)});
  if (spec.quadPx > 0) {
    option("--quad-px", spec.quadPx);
    option("--quad-x", spec.quadX);
    option("--quad-y", spec.quadY);
  }
  argv.insert(argv.end(), spec.extraArgs.begin(), spec.extraArgs.end());
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

bool hasValidationMessages(const std::string& log) {
  for (const char* marker : {"Validation Error", "Validation Warning", "VUID-", "SYNC-HAZARD", "UNASSIGNED-"}) {
    if (log.find(marker) != std::string::npos) return true;
  }
  return false;
}

std::map<std::string, std::string> validationEnv() {
  return {{"VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation"},
          {"VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"}};
}

// --- OpenXR apps ---------------------------------------------------------------------------

std::map<std::string, std::string> openxrEnv(const std::string& socket) {
  auto env = validationEnv();
  env["XR_RUNTIME_JSON"] = binary("XRC_OPENXR_MANIFEST");
  env["XR_COMPOSITOR_SOCKET"] = socket;
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
std::unique_ptr<Daemon> startDaemonOver(const Daemon& runtime, const TempDir& dir, bool coreValidation,
                                        const std::vector<std::string>& extraArgs,
                                        const std::map<std::string, std::string>& extraEnv) {
  auto env = openxrEnv(runtime.socket());
  env["XR_LOADER_DEBUG"] = "error";
  if (!coreValidation) env.erase("XR_ENABLE_API_LAYERS");
  for (const auto& [key, value] : extraEnv) env[key] = value;
  std::vector<std::string> args{"--backend", "openxr"};
  args.insert(args.end(), extraArgs.begin(), extraArgs.end());
  return std::make_unique<Daemon>(dir, args, env);
}

std::unique_ptr<Process> startHelloXr(const Daemon& daemon, const TempDir& dir, const std::string& graphics,
                                      const std::string& logName) {
  return std::make_unique<Process>(
      std::vector<std::string>{"/usr/bin/stdbuf", "-oL", binary("XRC_HELLO_XR"), "-g", graphics, "-v"},
      openxrEnv(daemon.socket()), dir.path + "/" + logName, true);
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

Bystander::Bystander(Daemon& daemon, const TempDir& dir, std::optional<uint32_t> overlay) : daemon_(daemon) {
  DemoSpec spec{"bystander", 3, 1'000'000};
  spec.overlay = overlay;
  process_ = startDemo(daemon, dir, spec);
}

Bystander::~Bystander() {
  process_->closeStdin();
  process_->signal(SIGTERM);
  process_->wait(std::chrono::seconds(10));
}

bool Bystander::connected() { return process_->waitForOutput("connected", std::chrono::seconds(30)); }

uint64_t Bystander::displayed() {
  auto c = daemon_.control();
  if (!c) return 0;
  auto s = c->status();
  if (!s) return 0;
  const auto* b = findClient(s.value(), "bystander");
  return b == nullptr ? 0 : b->framesDisplayed;
}

void Bystander::startRate() {
  rateStart_ = std::chrono::steady_clock::now();
  rateFrames_ = displayed();
}

void Bystander::reportRate(const char* during) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - rateStart_).count();
  const double rate = double(displayed() - rateFrames_) / seconds;
  std::printf("bystander: %.1f frames/s displayed during %s (%.1f s)\n", rate, during, seconds);
  ::testing::Test::RecordProperty("bystander_fps", std::to_string(rate));
}

namespace {

std::string progressLine(const Result<control::DaemonStatus>& status) {
  if (!status) return "status: " + status.error().describe();
  const control::DaemonStatus& s = status.value();
  std::string line = "display frames " + std::to_string(s.displayFrames);
  for (const control::ClientStatus& c : s.clients) {
    line += "; '" + c.name + "' submitted " + std::to_string(c.framesSubmitted) + " displayed " +
            std::to_string(c.framesDisplayed) + " late " + std::to_string(c.framesLate) + " dropped " +
            std::to_string(c.framesDropped) + " hidden " + std::to_string(c.framesHidden) + " releases " +
            std::to_string(c.releases);
  }
  return line;
}

}  // namespace

std::string progressLine(Daemon& daemon) {
  auto control = daemon.control();
  if (!control) return "no control connection";
  return progressLine(control->status());
}

::testing::AssertionResult keepsBeingDisplayed(Daemon& daemon, const std::string& name) {
  uint64_t before = 0;
  std::string atStart = "no control connection";
  if (auto control = daemon.control()) {
    auto status = control->status();
    atStart = progressLine(status);
    if (status) {
      if (const auto* c = findClient(status.value(), name)) before = c->framesDisplayed;
    }
  }
  const bool displayed = daemon.waitForStatus(
      [&](const control::DaemonStatus& s) {
        const auto* c = findClient(s, name);
        return c != nullptr && c->framesDisplayed > before + 5;
      },
      std::chrono::seconds(20));
  if (displayed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << name
                                       << "' got no more than 5 frames displayed in 20 s\n  before: " << atStart
                                       << "\n  after:  " << progressLine(daemon) << "\n";
}

bool windowOutputEnded(const control::DaemonStatus& s) {
  const auto& out = s.windowOutput;
  return out && !out->open && out->swapchainsLive == 0 && out->presentSemaphoresLive == 0;
}

namespace {

// The display's most common RGBA value over one eye's half, and its share of that half.
std::pair<uint32_t, double> dominantColor(const control::Pixels& px, uint32_t eye) {
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

}  // namespace

std::string helloXrDisplayProblem(const control::Pixels& px) {
  for (uint32_t eye = 0; eye < 2; ++eye) {
    auto [color, share] = dominantColor(px, eye);
    if (!isHelloXrBackground(color)) return fmt::format("eye {}: dominant color {:#x} is not hello_xr's", eye, color);
    if (share <= 0.5) return fmt::format("eye {}: hello_xr's background covers only {:.3f}", eye, share);
    if (share >= 0.999) return fmt::format("eye {}: nothing drawn over the background", eye);
  }
  return {};
}

size_t countDisplayMismatches(const control::Pixels& px, uint32_t view, uint32_t projectionSeed, uint64_t frame,
                              const std::vector<DisplayQuad>& quads, std::string* first) {
  size_t mismatches = 0;
  for (uint32_t eye = 0; eye < 2; ++eye) {
    for (uint32_t y = 0; y < view; ++y) {
      for (uint32_t x = 0; x < view; ++x) {
        uint32_t want = pattern::color({projectionSeed, eye, frame, 0, 0}, x, y);
        for (const DisplayQuad& q : quads) {
          if (x >= q.x && x < q.x + q.size && y >= q.y && y < q.y + q.size) {
            want = pattern::color({q.seed, 0, frame, 0, 0}, x - q.x, y - q.y);
          }
        }
        uint32_t got;
        std::memcpy(&got, &px.data[(size_t(y) * px.width + eye * view + x) * 4], 4);
        if (got != want && mismatches++ == 0 && first != nullptr) {
          *first = fmt::format("eye {} ({},{}): got {:#x} want {:#x}", eye, x, y, got, want);
        }
      }
    }
  }
  return mismatches;
}

uint32_t blendOver(uint32_t src, uint32_t dst) {
  const float a = float(src >> 24) / 255.f;
  uint32_t out = 0;
  for (int shift = 0; shift < 32; shift += 8) {
    const float s = float((src >> shift) & 0xff) / 255.f, d = float((dst >> shift) & 0xff) / 255.f;
    const float v = std::clamp(s + d * (1.f - a), 0.f, 1.f);
    out |= uint32_t(std::lround(v * 255.f)) << shift;
  }
  return out;
}

bool closeEnough(uint32_t got, uint32_t want, int tolerance) {
  for (int shift = 0; shift < 32; shift += 8) {
    if (std::abs(int((got >> shift) & 0xff) - int((want >> shift) & 0xff)) > tolerance) return false;
  }
  return true;
}

}  // namespace xrc::test
