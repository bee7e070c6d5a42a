// The thread that performs the frame path's GPU work in order: copies of released images into
// runtime images, frame commits, swapchain teardown. FIFO order is what guarantees that every
// release a client sent before an endFrame has been copied before that frame is committed.
#pragma once

#include "../common/job_thread.hpp"

namespace xrc {

using FrameWorker = JobThread;
inline constexpr const char* kFrameWorkerThreadName = "xrc-frames";

}  // namespace xrc
