#include "copy_batch.hpp"

namespace xrc {

CopyBatch::CopyBatch(kj::Timer& timer, std::chrono::microseconds window) : timer_(timer), window_(window) {}

kj::Promise<void> CopyBatch::join() {
  if (window_.count() <= 0) return kj::READY_NOW;
  State& state = *state_;
  if (!state.taking) {
    // The previous batch (if any) has been let go: its forked promise resolved, so replacing it
    // here, outside its continuation, only drops this object's reference to it.
    state.taking = true;
    state.batches++;
    const uint64_t generation = ++state.generation;
    batch_ = timer_.afterDelay(window_.count() * kj::MICROSECONDS)
                 .then([state = state_, generation] {
                   if (state->generation == generation) state->taking = false;
                 })
                 .fork();
  }
  state.copies++;
  return batch_->addBranch();
}

}  // namespace xrc
