// SimGrid as a Network (sim/network.hpp): one actor per unit, each waiting for the segments the step driver starts
// and running them as straight-line actor code (execute_steps: post the step's messages, wait, reduce), on the
// platform and mailboxes of all the segments. The training step itself is the driver's (sim/step_driver.hpp).
#include <xbt/log.h>

#include <unistd.h>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "algorithms/step_walker.hpp"
#include "sim/network.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/simgrid_internal.hpp"
#include "sim/step_driver.hpp"

namespace dtsim {
namespace {

namespace sg4 = simgrid::s4u;
using simgrid_detail::RankMailboxes;

class SimGridNetwork final : public Network {
public:
  // Builds the engine, the platform and the mailboxes of `segments` over `units` ranks. A deadlock is reported to
  // the parent through `result_fd`. `trace`: where execute_steps records steps, reductions and messages.
  SimGridNetwork(std::span<const Schedule* const> segments, int units, const SimGridOptions& o, int result_fd,
                 RunTrace* trace)
      : engine_(&argc_, argv_), result_fd_(result_fd), trace_(trace), placed_(o, units) {
    for (const Schedule* segment : segments) {  // (the actors run every step of a compact schedule written out)
      if (segment->compact()) expanded_.push_back(expand(*segment));
      segments_.push_back(segment->compact() ? &expanded_.back() : segment);
    }
    const SimGridOptions& placed = placed_.options;
    simgrid_detail::configure_engine(placed);
    hosts_ = simgrid_detail::build_platform(segments_, units, placed);
    mailboxes_ = simgrid_detail::make_mailboxes(segments_, units, placed);
    units_.resize(static_cast<std::size_t>(units));
    host_flops_per_compute_flop_ = o.cost.reduce_Bps / o.compute_flops_per_s;
    for (const Schedule* segment : segments_)  // (the steps' hop classes read the placed network)
      library_.push_back({segment_library_cost(placed, *segment), &placed});
  }

  double now() const override { return sg4::Engine::get_clock(); }

  void start_segment(int unit, std::size_t segment, double release_s) override {
    Unit& u = units_[static_cast<std::size_t>(unit)];
    u.pending.emplace_back(segment, release_s);
    ++queued_;
    if (u.waiting) {
      u.waiting = false;
      u.wake->release();
    }
  }

  void run(const std::function<void(int)>& on_done) override {
    if (queued_ == 0) return;  // nothing to send: the clock stays where it is
    on_done_ = &on_done;
    // a collective library's messages are eager (SimGrid's permanent receivers; for every segment on these pairs)
    const bool eager = std::any_of(library_.begin(), library_.end(), [](const auto& l) { return l.cost.active; });
    for (std::size_t r = 0; r < units_.size(); ++r) {
      units_[r].wake = sg4::Semaphore::create(0);
      sg4::ActorPtr actor =
          sg4::Actor::create("unit" + std::to_string(r), hosts_[r], [this, r] { serve(static_cast<int>(r)); });
      if (eager) {
        for (const auto& [peer, mailbox] : mailboxes_[r].in)
          mailbox->set_receiver(actor);
      }
    }
    sg4::Engine::on_deadlock_cb([this] {
      simgrid_detail::send_error_to_parent(result_fd_, "simgrid executor: training step deadlocked: " +
                                                           std::to_string(inside_segments()) + " ranks never finished");
      ::_exit(0);
    });
    engine_.run();
  }

  std::size_t inside_segments() const override {
    std::size_t n = 0;
    for (const Unit& u : units_)
      n += u.running || !u.pending.empty() ? 1 : 0;
    return n;
  }

private:
  struct Unit {
    std::deque<std::pair<std::size_t, double>> pending;  // (segment, release) in the order started
    sg4::SemaphorePtr wake;
    bool waiting = false;  // blocked on `wake` for the next segment
    bool running = false;
  };

  // A unit's actor: runs the segments it is given, one after another, until the driver has nothing left anywhere.
  void serve(int rank) {
    Unit& u = units_[static_cast<std::size_t>(rank)];
    while (true) {
      if (u.pending.empty()) {
        if (stopping_) return;
        u.waiting = true;
        u.wake->acquire();
        continue;
      }
      const auto [segment, release_s] = u.pending.front();
      u.pending.pop_front();
      u.running = true;
      if (release_s > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(release_s);
      const Schedule& s = *segments_[segment];
      simgrid_detail::execute_steps(s, s.rank_ops(rank), mailboxes_[static_cast<std::size_t>(rank)], nullptr,
                                    host_flops_per_compute_flop_, {}, trace_, library_[segment]);
      u.running = false;
      --queued_;
      (*on_done_)(rank);
      if (queued_ == 0) {  // the driver started nothing more: every unit is done
        stopping_ = true;
        for (Unit& other : units_) {
          if (!other.waiting) continue;
          other.waiting = false;
          other.wake->release();
        }
      }
    }
  }

  int argc_ = 1;
  char name_[6] = "dtsim";
  char* argv_[2] = {name_, nullptr};
  sg4::Engine engine_;
  std::deque<Schedule> expanded_;
  std::vector<const Schedule*> segments_;
  int result_fd_;
  RunTrace* trace_;
  std::vector<sg4::Host*> hosts_;
  std::vector<RankMailboxes> mailboxes_;
  std::vector<Unit> units_;
  double host_flops_per_compute_flop_ = 1;
  Placed<SimGridOptions> placed_;                     // the caller's, on the star's topology where they name none
  std::vector<simgrid_detail::StepLibrary> library_;  // by segment
  std::size_t queued_ = 0;                            // segments started and not yet done
  bool stopping_ = false;
  const std::function<void(int)>* on_done_ = nullptr;
};

}  // namespace

std::unique_ptr<Network> simgrid_detail::make_simgrid_network(std::span<const Schedule* const> segments, int units,
                                                              const SimGridOptions& options, int result_fd,
                                                              RunTrace* trace) {
  return std::make_unique<SimGridNetwork>(segments, units, options, result_fd, trace);
}

StepRun run_simgrid_step(const StepProgram& program, const SimGridOptions& options, RunTrace* trace) {
  if (std::string problem = check_step_program(program); !problem.empty()) {
    throw std::invalid_argument("training step: " + problem);
  }
  if (options.topology != nullptr && options.accelerator_of.size() != static_cast<std::size_t>(program.units)) {
    throw std::invalid_argument("training step: " + std::to_string(program.units) + " units but " +
                                std::to_string(options.accelerator_of.size()) + " placed on the cluster");
  }
  // SimGrid runs every step of a compact schedule written out
  std::deque<Schedule> expanded;
  std::vector<const Schedule*> segments;
  for (const Schedule* segment : program.segments) {
    if (segment->compact()) expanded.push_back(expand(*segment));
    segments.push_back(segment->compact() ? &expanded.back() : segment);
    if (std::string problem = check_well_formed(*segments.back()); !problem.empty()) {
      throw std::invalid_argument("training step: " + problem);
    }
  }
  check_simgrid_actors(program.units);  // one actor per unit
  static_assert(std::is_trivially_copyable_v<StepRun>, "the result crosses the pipe from the child as bytes");
  int status = 0;
  const std::string bytes = simgrid_detail::run_in_child(
      [&](int fd) {
        xbt_log_control_set("xbt_cfg.thresh:warning");
        RunTrace recorded;
        RunTrace* record = trace != nullptr ? &recorded : nullptr;
        SimGridNetwork network(segments, program.units, options, fd, record);
        const StepRun r = drive_step(program, network, "simgrid executor", record);
        const std::int32_t ok = 0;
        const std::uint64_t counts[2] = {recorded.transfers.size(), recorded.spans.size()};
        simgrid_detail::write_all(fd, &ok, sizeof ok);
        simgrid_detail::write_all(fd, &r, sizeof r);
        simgrid_detail::write_all(fd, counts, sizeof counts);
        simgrid_detail::write_all(fd, recorded.transfers.data(), recorded.transfers.size() * sizeof(TransferRecord));
        simgrid_detail::write_all(fd, recorded.spans.data(), recorded.spans.size() * sizeof(SpanRecord));
      },
      status);
  StepRun result;
  simgrid_detail::read_child_result(bytes, status, &result, sizeof result);
  std::uint64_t counts[2] = {0, 0};
  std::size_t at = sizeof(std::int32_t) + sizeof result;
  if (bytes.size() < at + sizeof counts) throw std::runtime_error("simgrid executor: truncated training result");
  std::memcpy(counts, bytes.data() + at, sizeof counts);
  at += sizeof counts;
  RunTrace discarded;
  RunTrace& into = trace != nullptr ? *trace : discarded;
  simgrid_detail::take_array(bytes, at, counts[0], into.transfers);
  simgrid_detail::take_array(bytes, at, counts[1], into.spans);
  if (at != bytes.size()) throw std::runtime_error("simgrid executor: truncated training result");
  return result;
}

TrainingResult run_simgrid_training(const TrainingProgram& program, int ranks, const SimGridOptions& options,
                                    RunTrace* trace) {
  if (std::string problem =
          check_training_program(program, ranks, options.topology != nullptr ? options.accelerator_of.size() : 0);
      !problem.empty()) {
    throw std::invalid_argument("training step: " + problem);
  }
  const auto started = std::chrono::steady_clock::now();
  SimGridOptions o = options;  // (a library's channels: units of their own, on their ranks' accelerators)
  std::unique_ptr<Topology> star;
  if (program.reduce_channels > 1 || !program.helper_endpoints.empty()) {
    star = place_on_star(o, ranks);  // (on the star: a host per rank, its units on it, as the flow engine lays them)
    o.accelerator_of = training_unit_accelerators(program, o.accelerator_of);
  }
  TrainingResult result = training_result(program, run_simgrid_step(data_parallel_step(program, ranks), o, trace));
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace dtsim
