#include "headless_output.hpp"

#include <cmath>

#include "xrc/monotonic_clock.hpp"

namespace xrc {

HeadlessOutput::HeadlessOutput(const HeadlessOutputOptions& options) : options_(options) {
  clock_.periodNs = int64_t(std::llround(1e9 / options_.refreshHz));
  clock_.originNs = monotonicNowNs();
}

Result<std::unique_ptr<HeadlessOutput>> HeadlessOutput::create(gpu::GpuDevice& gpu,
                                                               const HeadlessOutputOptions& options) {
  auto output = std::make_unique<HeadlessOutput>(options);
  auto image = display::createOutputImage(gpu, options.width, options.height);
  if (!image) return image.error();
  output->image_ = std::move(image).value();
  return output;
}

}  // namespace xrc
