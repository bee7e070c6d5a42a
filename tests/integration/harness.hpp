// Test harness: real processes (the daemon, demo clients) with their output in files, and
// helpers to check read-back pixels against the demo pattern.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "process.hpp"
#include "xrc/control.hpp"

namespace xrc::test {

// Paths to the built executables, passed by meson through the environment.
std::string binary(const char* envName);

using tools::Process;
using tools::TempDir;

class Daemon {
 public:
  explicit Daemon(const TempDir& dir, std::vector<std::string> extraArgs = {},
                  std::map<std::string, std::string> env = {});
  bool ready() const { return ready_; }
  const std::string& socket() const { return socket_; }
  Process& process() { return *process_; }
  std::unique_ptr<control::ControlClient> control();
  // Number of open fds in the daemon process.
  int fdCount() const;
  // Polls status until `predicate` holds or the timeout passes.
  bool waitForStatus(const std::function<bool(const control::DaemonStatus&)>& predicate,
                     std::chrono::milliseconds timeout);

 private:
  std::string socket_;
  std::unique_ptr<Process> process_;
  bool ready_ = false;
};

struct DemoSpec {
  std::string name;
  uint32_t seed = 1;
  uint64_t frames = 120;
  std::string stereo = "separate";
  bool depth = false;
  bool projection = true;
  uint32_t quadPx = 0, quadX = 0, quadY = 0;
  uint32_t mips = 1;
  std::optional<uint32_t> overlay = std::nullopt;  // overlay session at this placement
  uint32_t alpha = 255;
  uint32_t workMs = 0, lateEvery = 0;
  uint64_t stallAfter = 0;
  bool stats = false;                                  // --stats: timing lines after the last frame
  std::string blendMode = "opaque";                    // --blend-mode
  std::string shape = "";                              // --shape cylinder|equirect
  float shapeRadius = 0;                               // --shape-radius
  std::vector<float> colorScale = {}, colorBias = {};  // --color-scale, --color-bias (4 values each)
  float viewYaw = 0;                                   // --view-yaw (radians)
  std::vector<std::string> extraArgs = {};             // appended as given
};

std::unique_ptr<Process> startDemo(const Daemon& daemon, const TempDir& dir, const DemoSpec& spec,
                                   std::map<std::string, std::string> env = {});
// Parses "client N connected sync=M swapchains=a,b" from a demo's output.
struct DemoIdentity {
  uint32_t clientId = 0;
  std::string syncMode;
  std::vector<uint32_t> swapchains;
};
bool parseIdentity(const std::string& output, DemoIdentity& out);

// Counts texels of `pixels` (every mip and layer) that differ from the demo pattern; `first`
// describes the first mismatch.
size_t countPatternMismatches(const control::Pixels& pixels, uint32_t seed, uint32_t swapchainIndex, uint64_t ordinal,
                              std::string* first = nullptr);

// Counts display texels (both eyes of `view` × `view`) that differ from a demo's frame `frame`:
// the projection of seed `projectionSeed` with `quads` on top, in order; `first` describes the
// first mismatch.
struct DisplayQuad {
  uint32_t seed = 0, x = 0, y = 0, size = 0;
};
size_t countDisplayMismatches(const control::Pixels& px, uint32_t view, uint32_t projectionSeed, uint64_t frame,
                              const std::vector<DisplayQuad>& quads, std::string* first = nullptr);

// The status entry of client `id`, or null.
const control::ClientStatus* findClient(const control::DaemonStatus& status, uint32_t id);

// Runs xr-compositorctl with `args` (log in `dir`); its exit code and output.
struct CtlResult {
  int exitCode = -1;
  std::string output;
};
CtlResult runCtl(const TempDir& dir, const std::vector<std::string>& args, std::map<std::string, std::string> env = {});

// Environment that loads the Khronos validation layer with synchronization validation.
std::map<std::string, std::string> validationEnv();
// Whether a process's output holds a message of the validation layers.
bool hasValidationMessages(const std::string& log);

// --- OpenXR apps (through the runtime face) ---

// Environment for an OpenXR app of the daemon at `socket`: our runtime manifest, the OpenXR core
// validation layer, Vulkan validation, and what sanitizer builds need for uninstrumented apps.
std::map<std::string, std::string> openxrEnv(const std::string& socket);
// Daemon B over daemon A (`runtime`): `--backend openxr`, an OpenXR application of A's runtime
// face, with validation on both APIs (`coreValidation` false: without the OpenXR core validation
// layer between B and A).
// `extraArgs` and `extraEnv` are added to the daemon's own.
std::unique_ptr<Daemon> startDaemonOver(const Daemon& runtime, const TempDir& dir, bool coreValidation = true,
                                        const std::vector<std::string>& extraArgs = {},
                                        const std::map<std::string, std::string>& extraEnv = {});
// Debian's hello_xr with graphics plugin `graphics` (Vulkan2, Vulkan); its output in `logName`.
std::unique_ptr<Process> startHelloXr(const Daemon& daemon, const TempDir& dir, const std::string& graphics,
                                      const std::string& logName);
// What either validation layer (or hello_xr itself) reports as a problem, one line each.
std::vector<std::string> problemsIn(const std::string& output);
// The status entry of the client named `name`, or null.
const control::ClientStatus* findClient(const control::DaemonStatus& status, const std::string& name);
// Whether client `name` gets more than 5 more frames displayed within 20 s: progress, not a
// rate (sanitizer builds render slowly). A failure says, in one line each, where the daemon's
// display and every client stood before and after.
::testing::AssertionResult keepsBeingDisplayed(Daemon& daemon, const std::string& name);
// One line: the daemon's display frames and each client's frames (submitted, displayed, late,
// dropped, hidden) and releases; or why there is no status.
std::string progressLine(Daemon& daemon);
// The window output has ended: closed, with no swapchain and no present semaphore left.
bool windowOutputEnded(const control::DaemonStatus& s);
// A demo client named "bystander" rendering beside an attack (an overlay at `overlay` when
// given, so it is shown whoever is primary), stopped at destruction.
class Bystander {
 public:
  Bystander(Daemon& daemon, const TempDir& dir, std::optional<uint32_t> overlay = std::nullopt);
  ~Bystander();
  bool connected();  // within 30 s
  std::string output() { return process_->output(); }
  uint64_t displayed();
  // Starts a measurement of its display rate, printed by reportRate() (not asserted: sanitizer
  // builds render slowly; docs/BENCHMARKS.md has figures from the normal build).
  void startRate();
  void reportRate(const char* during);
  ::testing::AssertionResult keepsBeingDisplayed() { return test::keepsBeingDisplayed(daemon_, "bystander"); }

 private:
  Daemon& daemon_;
  std::unique_ptr<Process> process_;
  std::chrono::steady_clock::time_point rateStart_;
  uint64_t rateFrames_ = 0;
};

// Whether a headless display shows hello_xr in both eyes (its background over most of each eye,
// something drawn over it): empty if so, else what is wrong.
std::string helloXrDisplayProblem(const control::Pixels& px);

// RGBA8 (R in the low byte): `src` (premultiplied) blended over `dst`, as the display does.
uint32_t blendOver(uint32_t src, uint32_t dst);
// Every channel within `tolerance` of the wanted one.
bool closeEnough(uint32_t got, uint32_t want, int tolerance);

}  // namespace xrc::test
