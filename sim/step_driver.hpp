// The data-parallel training step, written once and run on any Network (sim/network.hpp): SimGrid, the flow engine or
// its lumped form.
//
// Every unit (a rank, or a class of ranks that run alike) runs `program.steps` steps of the same program: take a batch
// from the input pipeline (the loader keeps up to `prefetch` batches ahead, each `batch_s` long), forward layer by
// layer, backward from the last layer down, releasing each gradient bucket once the layers it holds are done; the
// buckets' allreduces run on the network one after another, each as soon as its bucket is ready and the previous
// allreduce is done (DDP's and Horovod's communication thread; Horovod: at the next multiple of the fusion cycle);
// the step waits for the last, then runs the optimizer. Computes are local, so the driver times them and releases
// each allreduce at the instant its bucket is ready; only the allreduces go to the network.
//
// The breakdown is measured here, from the run, whatever the engine: per unit its last step's input stall, the
// communication the step waited for after backward (exposed), and the time its allreduces took (hidden or not).
#pragma once

#include "sim/executor.hpp"
#include "sim/network.hpp"

namespace dtsim {

// Runs `program` on `network`, built with program.buckets as its segments (in order), for `units` units. `trace`:
// where to record each unit's input stalls, forward, backward, allreduce and optimizer intervals. Throws
// std::runtime_error naming `engine` when units never finish (a deadlock).
TrainingResult drive_training(const TrainingProgram& program, Network& network, int units, const char* engine,
                              RunTrace* trace = nullptr);

}  // namespace dtsim
