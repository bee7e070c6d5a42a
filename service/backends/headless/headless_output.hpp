// The headless output: the display core composes into an image of its own on the GPU, at a
// refresh rate from the steady clock, for read-backs (tests, snapshots) and, where a window
// mirror is given, for a person to look at (the window output presents each composition).
#pragma once

#include <optional>

#include "../../display/output.hpp"
#include "../../gpu/gpu_device.hpp"

namespace xrc {

struct HeadlessOutputOptions {
  uint32_t width = 2 * 1440, height = 1600;  // the views side by side
  double refreshHz = 90.0;
  // Where each composition is also presented (the window); outlives the output.
  present::DisplayPresenter* mirror = nullptr;
};

class HeadlessOutput final : public display::Output {
 public:
  static Result<std::unique_ptr<HeadlessOutput>> create(gpu::GpuDevice& gpu, const HeadlessOutputOptions& options);
  explicit HeadlessOutput(const HeadlessOutputOptions& options);  // create() makes its image

  DisplayClock clock() const override { return clock_; }
  display::OutputImage image() const override { return image_.get(); }
  bool showsCompositions() const override { return options_.mirror != nullptr; }
  void present(const present::PresentSource& composed) override {
    if (options_.mirror != nullptr) options_.mirror->present(composed);
  }
  void finish() override {
    if (options_.mirror != nullptr) options_.mirror->finish();
  }
  std::optional<present::PresenterStats> windowStats() const override {
    if (options_.mirror == nullptr) return std::nullopt;
    return options_.mirror->stats();
  }

 private:
  HeadlessOutputOptions options_;
  DisplayClock clock_;
  display::OwnedOutputImage image_;
};

}  // namespace xrc
