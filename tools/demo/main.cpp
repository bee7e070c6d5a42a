// xr-compositor-demo: a real Vulkan client that renders a known, frame-varying pattern through
// xr-compositord. Exits non-zero if any frame failed.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "demo_client.hpp"

int main(int argc, char** argv) {
  xrc::tools::DemoOptions o;
  CLI::App app{"xr-compositor-demo: renders a test pattern through xr-compositord"};
  app.add_option("--socket", o.socket, "Daemon socket (default $XR_COMPOSITOR_SOCKET or the default path)");
  app.add_option("--frames", o.frames, "Frames to render")->capture_default_str();
  app.add_option("--name", o.name, "Application name shown in status")->capture_default_str();
  app.add_option("--seed", o.seed, "Pattern seed")->capture_default_str();
  app.add_option("--stereo", o.stereo, "separate (a swapchain per eye) or array (one 2-layer swapchain)")
      ->check(CLI::IsMember({"separate", "array"}))
      ->capture_default_str();
  app.add_flag("--depth", o.depth, "Also submit a depth swapchain");
  app.add_option("--width", o.width, "Swapchain width (default: recommended)");
  app.add_option("--height", o.height, "Swapchain height (default: recommended)");
  app.add_option("--mips", o.mips, "Mip levels")->capture_default_str();
  app.add_option("--quad-px", o.quadPx, "Also submit a quad layer of this size in pixels");
  app.add_option("--shape", o.shape,
                 "Also submit a cylinder (90 degrees wide, aspect 1) or equirect (90 x 90 degrees) layer of view 0's "
                 "image straight ahead, or a cube layer of a cube map swapchain of its own")
      ->check(CLI::IsMember({"cylinder", "equirect", "cube"}));
  app.add_option("--shape-radius", o.shapeRadius, "Radius of the --shape layer in meters (0: infinitely far)")
      ->check(CLI::Range(0.f, 1000.f));
  app.add_option("--quad-x", o.quadX, "Quad position in the eye (pixels)");
  app.add_option("--quad-y", o.quadY, "Quad position in the eye (pixels)");
  bool noProjection = false;
  app.add_flag("--no-projection", noProjection, "Submit only the quad layer (needs --quad-px)");
  app.add_flag("--hold", o.hold, "Keep the session open after the last frame until stdin closes");
  app.add_flag("--stats", o.stats, "Print release-call and frame timing statistics");
  auto* overlay = app.add_option("--overlay", o.overlayPlacement,
                                 "Connect as an overlay session at this placement (higher on top)");
  app.add_option("--alpha", o.alpha, "Render with this alpha (0-255); below 255 the layers are blended")
      ->check(CLI::Range(0, 255));
  app.add_option("--view-yaw", o.viewYaw,
                 "Projection views claim to be rendered with the head turned this far (radians about +y)")
      ->check(CLI::Range(-1.5, 1.5));
  app.add_option("--color-scale", o.colorScale, "Color scale of every layer: R G B A (with --color-bias)")->expected(4);
  app.add_option("--color-bias", o.colorBias, "Color bias of every layer: R G B A (with --color-scale)")->expected(4);
  app.add_option("--blend-mode", o.blendMode, "Environment blend mode: opaque, additive or alpha_blend")
      ->capture_default_str();
  app.add_option("--work-ms", o.workMs, "Simulated render time per frame (ms)");
  app.add_option("--late-every", o.lateEvery, "Make every n-th frame miss its display time");
  app.add_option("--stall-after", o.stallAfter, "Stop submitting after this many frames, keep the session");
  app.add_option("--gpu-hang-every", o.gpuHangEvery,
                 "Every n-th frame, hold the rendering back on the GPU for --gpu-hang-ms (needs timeline "
                 "semaphores)");
  app.add_option("--gpu-hang-ms", o.gpuHangMs, "How long each --gpu-hang-every stop lasts")->capture_default_str();
  app.add_flag("--answer-waits-at-once,!--answer-waits-at-wake", o.answerWaitsAtOnce,
               "Ask for each wait to be answered as its endFrame arrives and sleep to its wake here (1.18, "
               "the default), or to be answered at its wake");
  app.add_option("--protocol-minor", o.protocolMinor,
                 "Speak this protocol minor (e.g. 3: acquire, wait and beginFrame as separate calls)")
      ->check(CLI::Range(0, int(xrc::kProtocolMinor)));
  app.add_option("--render-us", o.renderUs,
                 "Sleep this long between an image's wait and its release, as an application recording its "
                 "frame would take (benchmarks)");
  app.add_flag("--finish-render", o.finishRender,
               "Wait for the GPU to finish each frame's rendering before releasing (benchmarks: the daemon's copy "
               "then finds rendering_done already signalled)");
  app.add_flag("--render-once", o.renderOnce,
               "Render each swapchain image once, then release it again without new rendering (benchmarks: the "
               "daemon's cost without the clients' GPU work)");
  app.add_flag("--clear-only", o.clearOnly,
               "Render by a GPU clear instead of the CPU-written test pattern (benchmarks)");
  CLI11_PARSE(app, argc, argv);
  if (o.colorScale.empty() != o.colorBias.empty()) {
    std::fprintf(stderr, "--color-scale and --color-bias go together\n");
    return 2;
  }
  o.projection = !noProjection;
  o.overlay = overlay->count() > 0;
  return xrc::tools::runDemo(o);
}
