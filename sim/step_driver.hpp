// The training step, written once and run on any Network (sim/network.hpp): SimGrid, the flow engine or its lumped
// form. The program (sim/step_program.hpp) says what each rank runs; the driver runs it.
//
// Each rank runs `steps` steps. A step takes a batch from the input pipeline (the loader keeps up to `prefetch`
// batches ahead, each `batch_s` long), then the stage's pipeline order of forwards and backwards over its
// micro-batches (data parallelism alone: one forward, one backward). A forward waits for its activations from the
// previous stage, runs its layers (the driver times local computes; a layer with a tensor-parallel allreduce waits for
// it on the network) and sends its activations on; a backward likewise from the next stage, in reverse layer order.
// The last backward releases each gradient bucket once the layers it holds are done; the reduce stream reduces them
// one after another, each as soon as it is ready and the previous is done (Horovod: at the next multiple of the fusion
// cycle). ZeRO-3 gathers each bucket's parameters before its layers' first forward and first backward of the step,
// ahead of them (prefetch) or on demand. The step waits for the last reduction, then runs the optimizer. Where the
// transport runs on the processor that computes (StageStep::bucket_wire_s: kernel TCP), a fluid model of each rank
// slows the backward's computes and the buckets' drain while both run, and starts each reduction accordingly later.
//
// Only communication goes to the network: computes are local, so the driver times them and releases each segment at
// the instant it may start; what it starts moves on the same network as everything else in flight. The breakdown is
// measured here, from the run, whatever the engine.
#pragma once

#include <cstdint>

#include "sim/executor.hpp"
#include "sim/network.hpp"
#include "sim/step_program.hpp"

namespace dtsim {

// One rank's last simulated step, measured from the run. The compute stream is always either computing or waiting for
// exactly one thing, so step_s = input_stall_s + compute_s + tensor_s + expert_s + context_s + bubble_s +
// gather_wait_s + exposed_s + optimizer_s.
struct RankStep {
  double step_s = 0;
  double input_stall_s = 0;
  double compute_s = 0;      // local forward and backward computes
  double tensor_s = 0;       // waiting for tensor-parallel allreduces
  double expert_s = 0;       // waiting for expert-parallel all-to-alls
  double context_s = 0;      // waiting for context-parallel key and value exchanges
  double bubble_s = 0;       // waiting for activations and gradients from other stages
  double gather_wait_s = 0;  // waiting for ZeRO-3 parameter gathers
  double exposed_s = 0;      // waiting for the gradient reductions after the last backward
  double optimizer_s = 0;
  double reduce_s = 0;  // the reduce stream's time in its reductions (hidden or not)
};

struct StepRun {
  int slowest_rank = 0;  // the rank whose last step took longest (the first of equals)
  RankStep slowest;
  int driven_ranks = 0;       // ranks the driver ran: every rank, or one per class of ranks that run alike
  std::uint64_t batches = 0;  // instants the engine processed (the flow engines; 0 from the others)
};

// The ranks the driver runs: every rank of the program, or one rank for each class of ranks that provably run alike
// (the lumped flow engine), each driving the network's units (classes of units) of its streams.
struct DrivenRanks {
  std::vector<int> rank;                            // the program's rank each stands for (its stage, in results)
  std::vector<std::array<int, stream_count>> unit;  // by driven rank and stream: its unit (-1: a stream not used)
  std::vector<std::vector<int>> more_reduce_units;  // by driven rank: its other reduce units (StepProgram channels)
};
// Every rank, with the units StepProgram::unit gives.
DrivenRanks every_rank(const StepProgram& program);

// Runs `program` on `network`, built with program.segments (in order) over program.units units (or over the classes
// of units that `driven` names). `trace`: where to record each rank's input stalls, forwards, backwards, optimizer and
// reduction intervals. Throws std::runtime_error naming `engine` when ranks never finish (a deadlock).
StepRun drive_step(const StepProgram& program, Network& network, const DrivenRanks& driven, const char* engine,
                   RunTrace* trace = nullptr);
// drive_step of every rank.
StepRun drive_step(const StepProgram& program, Network& network, const char* engine, RunTrace* trace = nullptr);

// A data-parallel TrainingProgram as a StepProgram over `ranks` ranks (or classes of ranks), one stream (reduce), its
// buckets borrowed.
StepProgram data_parallel_step(const TrainingProgram& program, int ranks);

// A data-parallel run as a TrainingResult.
TrainingResult training_result(const TrainingProgram& program, const StepRun& run);

// drive_step of data_parallel_step(program), as a TrainingResult.
TrainingResult drive_training(const TrainingProgram& program, Network& network, int units, const char* engine,
                              RunTrace* trace = nullptr);

}  // namespace dtsim
