// The demo client's rendering: swapchains filled with the known pattern (tools/common/pattern.hpp)
// through a staging buffer copy, every frame different.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../common/vulkan_app.hpp"
#include "xrc/client.hpp"

namespace xrc::tools {

struct DemoOptions {
  std::string socket;
  std::string name = "xr-compositor-demo";
  uint64_t frames = 300;
  uint32_t seed = 1;
  std::string stereo = "separate";  // separate: one color swapchain per eye; array: one 2-layer swapchain
  bool depth = false;               // add a depth swapchain (depth info on the projection views)
  uint32_t width = 0, height = 0;   // 0: the daemon's recommended view size
  uint32_t mips = 1;
  uint32_t quadPx = 0;  // > 0: also submit a quad layer of that many pixels at (quadX, quadY)
  uint32_t quadX = 0, quadY = 0;
  // "cylinder" or "equirect": also submit such a layer of view 0's image, centred straight ahead
  // of the head, infinitely far (shapeRadius 0) or at shapeRadius meters; "cube": a cube layer of
  // a cube map swapchain of its own, unrotated (protocol 1.6).
  std::string shape;
  float shapeRadius = 0;
  bool projection = true;  // false: submit only the quad layer
  bool hold = false;       // keep the session after the last frame until stdin closes
  bool stats = false;      // print timing statistics
  bool overlay = false;    // an overlay session at `overlayPlacement`
  uint32_t overlayPlacement = 0;
  uint32_t alpha = 255;  // < 255: rendered with this alpha, layers flagged for blending
  // The projection views claim to be rendered with the head turned this far (radians, about +y,
  // positive to the left): a display at another orientation reprojects them.
  float viewYaw = 0;
  // Both given (4 values each): every layer carries this color scale and bias (protocol 1.9).
  std::vector<float> colorScale, colorBias;
  std::string blendMode = "opaque";         // environment blend mode asked for in endFrame
  uint32_t workMs = 0;                      // simulated render time per frame (slower clients)
  uint32_t renderUs = 0;                    // CPU time between an image\'s wait and its release (benchmarks)
  uint32_t lateEvery = 0;                   // > 0: every n-th frame misses its display time on purpose
  uint64_t stallAfter = 0;                  // > 0: stop submitting after this many frames (until stdin closes)
  bool clearOnly = false;                   // render by a GPU clear (benchmarks), not the checkable pattern
  bool finishRender = false;                // wait for the GPU to finish rendering before release (benchmarks)
  bool renderOnce = false;                  // render each image once, then only cycle it (benchmarks)
  uint16_t protocolMinor = kProtocolMinor;  // speak an older minor (A/B of the frame calls)
  bool answerWaitsAtOnce = client::ConnectOptions{}.answerWaitsAtOnce;
  // > 0: every n-th frame, the last swapchain's rendering waits on the GPU for gpuHangMs (on a
  // semaphore the host signals later), and its release with it: a client whose GPU work hangs.
  uint64_t gpuHangEvery = 0;
  uint32_t gpuHangMs = 1000;
};

int runDemo(const DemoOptions& options);

}  // namespace xrc::tools
