// The composition's writes to the display output since its last write-after-write barrier.
// Layers are drawn in order, and a later one that touches a pixel an earlier one wrote must see
// that write (it overwrites it, or blends over it: the blend shader reads the output). Writes to
// disjoint pixels need nothing between them: the views of a projection layer, side by side, are
// copied with no barrier. On a GPU every barrier drains the stages it names, so only the ones a
// hazard calls for are recorded.
#pragma once

#include <cstdint>
#include <vector>

namespace xrc::display {

struct PixelRect {
  int32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // [x0, x1) x [y0, y1), output pixels

  bool empty() const { return x1 <= x0 || y1 <= y0; }
  bool overlaps(const PixelRect& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

class OutputWrites {
 public:
  // A write to `rect` is about to be recorded. True when a barrier must be recorded before it:
  // it touches pixels written since the last barrier. Either way `rect` is then pending.
  bool write(const PixelRect& rect) {
    bool hazard = false;
    for (const PixelRect& p : pending_) hazard = hazard || p.overlaps(rect);
    if (hazard) pending_.clear();
    if (!rect.empty()) pending_.push_back(rect);
    return hazard;
  }

 private:
  std::vector<PixelRect> pending_;
};

}  // namespace xrc::display
