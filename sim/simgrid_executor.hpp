// The SimGrid executor: one s4u actor per rank on a simulated platform, running the Schedule's steps as straight-line
// actor code: post the step's sends (Mailbox::put_async with the chunk's simulated size) and receives, wait for them
// all, then run the step's reductions as a compute activity sized by the reduce rate.
//
// Platform: a star, or a cluster (SimGridOptions::topology) with explicit routes. The star: Every host has one
// split-duplex link (up and down) of the given bandwidth to one switch; each link carries half of alpha, so a route
// between two hosts (sender's up + receiver's down) has latency alpha.
//
// Network model: CM02 with cross-traffic off and TCP-gamma 0 (no window bound) by default, which reproduces the
// alpha-beta closed forms on a contention-free star while still sharing links max-min fairly under contention.
// LV08 (SimGrid's own default, calibrated for TCP: latency x13.01, bandwidth x0.97, ACK cross-traffic) can be chosen.
//
// Each simulation runs in a forked child process: SimGrid 3.32 allows one engine per process and its model cannot be
// reconfigured, and a child keeps SimGrid's own fatal errors from taking the caller down.
#pragma once

#include <cstdint>
#include <string>

#include <utility>
#include <vector>

#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"
#include "models/calibration.hpp"
#include "sim/executor.hpp"
#include "sim/network.hpp"
#include "sim/step_driver.hpp"
#include "sim/topology.hpp"

namespace dtsim {

enum class NetworkModel { cm02, lv08 };

const char* to_string(NetworkModel model);

// The network (NetworkCost: the star's costs, or a cluster: position p runs on accelerator accelerator_of[p], each
// accelerator a host whose speed is the node's reduce rate, each topology link a split-duplex SimGrid link, and every
// (sender, receiver) pair of the schedule gets its explicit route; cost.alpha_s and cost.bandwidth_Bps are then
// unused) and SimGrid's own knobs.
struct SimGridOptions : NetworkCost {
  SimGridOptions() = default;
  explicit SimGridOptions(NetworkCost network) : NetworkCost(std::move(network)) {}
  NetworkModel network_model = NetworkModel::cm02;
  // Real-payload mode: every participating rank holds bytes/4 floats (helper ranks start with zeros) (small random
  // integers, so every sum is exact in float), transfers carry copies of the chunks, reductions add them, and the
  // result is checked against the exact sum.
  bool real_payload = false;
  std::uint64_t payload_seed = 1;
  // TCP acknowledgements: every flow also loads the reverse direction of its route with a small share of its rate
  // (SimGrid's network/crosstraffic, CM02 only; LV08 always has it).
  bool ack_crosstraffic = false;
  // Eager protocol: a send starts as soon as it is posted, before its receive (the data waits at the receiver), as
  // MPI libraries send messages below their eager limit. Default: rendezvous, the Schedule's own semantics.
  bool eager = false;
  // Receiver-ready protocol (dtsim-mpi-run's): each receive first sends its sender an empty "ready" message and a
  // send starts only when that has arrived, so a rank that runs ahead cannot load a link its receiver still needs.
  bool ready_handshake = false;
  // Transport send buffer (dtsim-mpi-run over OpenMPI's TCP transport): a send is complete for its rank once all but
  // its last send_buffer_bytes have left, and those go on during the rank's next steps, on the same route after the
  // rest (as a second message, with its own latency). A rank's sends to different receivers in consecutive steps then
  // overlap by that much, as a binomial broadcast's do over TCP. 0 (default): a send holds its step until it is
  // received. Measured by `dtsim-mpi-pingpong sendtime`.
  std::uint64_t send_buffer_bytes = 0;
  // With a send buffer: how many times the share of a newer message a message gets that its rank wrote into the
  // buffer in an earlier step, while both are on their way (1: fair sharing). Over TCP at 1 Gbit/s it is about 2,
  // without losses; why is not known (docs/validation.md). Whole numbers only: the message moves as that many equal
  // parts, and a newer one as one part (plus empty ones, so that its receiver posts as many receives either way).
  // Fitted to `dtsim-mpi-pingpong twosends`.
  int older_send_weight = 1;
  // Record every step, reduction and message into ExecutionResult::trace (for --trace and link utilisation).
  bool record_trace = false;
};

// The most actors one SimGrid simulation can create on this machine: each actor's stack and its guard page take two
// of the memory mappings the kernel allows a process (vm.max_map_count, 65530 by default), less those the process
// already holds and a margin for SimGrid's own. Above it SimGrid aborts ("Failed to protect stack").
int simgrid_actor_limit();
// Throws std::invalid_argument when `actors` exceed simgrid_actor_limit(), with the limit and why.
void check_simgrid_actors(int actors);

// A compact schedule is expanded first. Throws std::invalid_argument for a malformed schedule or options (or more ranks
// than check_simgrid_actors allows, or an expanded form above ScheduleBuilder::max_ops),
// std::runtime_error when the simulation fails (deadlock, SimGrid stopped, or the child ran out of memory).
ExecutionResult run_simgrid(const Schedule& schedule, const SimGridOptions& options);

// Throws std::invalid_argument for an inconsistent program, std::runtime_error when the simulation fails. `trace`:
// where to record every rank's input stalls, forward, backward, optimizer and allreduce intervals and messages.
TrainingResult run_simgrid_training(const TrainingProgram& program, int ranks, const SimGridOptions& options,
                                    RunTrace* trace = nullptr);

// A training step program (sim/step_program.hpp) on SimGrid: one actor per unit of the program, on the accelerator
// options.accelerator_of names for it (several units share an accelerator's host and links). Throws as
// run_simgrid_training does. `trace`: the driver's spans and every message.
StepRun run_simgrid_step(const StepProgram& program, const SimGridOptions& options, RunTrace* trace = nullptr);

// The initial value of element i on `rank` in real-payload mode (an integer in [-64, 64]).
float payload_value(std::uint64_t seed, int rank, std::uint64_t element);

}  // namespace dtsim
