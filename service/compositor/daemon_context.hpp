// What every RPC object of the daemon reaches: the GPU, the backend, the frame worker, the
// client registry and the frame scheduler. Owned by main(); outlives every connection.
#pragma once

#include <chrono>
#include <optional>

#include "../backends/backend.hpp"
#include "../config/limits.hpp"
#include "../gpu/gpu_device.hpp"
#include "../gpu/rendering_waiter.hpp"
#include "../gpu/timeline.hpp"
#include "client_registry.hpp"
#include "frame_scheduler.hpp"
#include "frame_worker.hpp"
#include "image_budget.hpp"
#include "refusals.hpp"
#include "retired_swapchains.hpp"

namespace xrc {

class CopyBatch;
class RpcCpuKeeper;
class LetGoCopies;
class StateChanges;

struct DaemonContext {
  gpu::GpuDevice& gpu;
  gpu::Timeline& copyTimeline;
  Backend& backend;
  FrameWorker& worker;
  RetiredSwapchains& retired;  // destroyed swapchains whose copies are still in flight
  ClientRegistry& clients;
  FrameScheduler& scheduler;
  const Limits& limits;
  ImageBudget& images;
  Refusals& refusals;
  // Timeline mode's CPU-side waits for clients' rendering (docs/SYNC.md).
  gpu::RenderingWaiter& renderingWaiter;
  // KJ thread only: timeline copies held back to be submitted together (copy_batch_before_latch_us,
  // copy_batch_us).
  CopyBatch& copyBatch;
  // KJ thread only: the copies let go together, gathered into one submission (LetGoCopies).
  LetGoCopies& letGoCopies;
  // KJ thread only: changes to sessions' visibility, focus, LOCAL, input or `stopping`, for the
  // clients that watch them (Session.watchState, 1.18).
  StateChanges& stateChanges;
  std::optional<SyncMode> forcedSyncMode;
  std::chrono::milliseconds gpuTimeout{2000};
  int64_t startNs = 0;
  uint32_t daemonUid = 0;
  // KJ thread only: set once a shutdown signal came; waitFrame answers then ask clients to stop.
  bool stopping = false;
  // KJ thread only: accept() calls that failed (fds exhausted); status `accept_failures`.
  uint64_t acceptFailures = 0;
  // KJ thread only: rpc_cpu auto's keeper, once started (status `rpc_thread_moves`); null otherwise.
  const RpcCpuKeeper* rpcCpuKeeper = nullptr;
};

}  // namespace xrc
