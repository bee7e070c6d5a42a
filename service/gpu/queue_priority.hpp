// System-wide scheduling priority of the daemon's GPU queues (VK_KHR/EXT_global_priority), by
// name as the configuration spells it. No Vulkan here: the configuration validates names too.
#pragma once

#include <string>

namespace xrc::gpu {

enum class QueuePriority { low, medium, high, realtime };

inline const char* toString(QueuePriority priority) {
  switch (priority) {
    case QueuePriority::low:
      return "low";
    case QueuePriority::medium:
      return "medium";
    case QueuePriority::high:
      return "high";
    case QueuePriority::realtime:
      return "realtime";
  }
  return "?";
}

// "low" | "medium" | "high" | "realtime"
inline bool parseQueuePriority(const std::string& text, QueuePriority& out) {
  for (QueuePriority p : {QueuePriority::low, QueuePriority::medium, QueuePriority::high, QueuePriority::realtime}) {
    if (text == toString(p)) {
      out = p;
      return true;
    }
  }
  return false;
}

}  // namespace xrc::gpu
