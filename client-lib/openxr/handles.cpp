#include "handles.hpp"

namespace xrc::openxr {

Handles& Handles::get() {
  static Handles handles;
  return handles;
}

}  // namespace xrc::openxr
