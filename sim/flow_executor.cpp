#include "sim/flow_executor.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <stdexcept>
#include <tuple>

#include "algorithms/step_walker.hpp"
#include "sim/all_pairs_lumping.hpp"
#include "sim/flow_engine.hpp"
#include "sim/flow_lumping.hpp"
#include "sim/library_cost.hpp"
#include "sim/step_driver.hpp"

namespace dtsim {
namespace {

using flow_engine::FlowEngine;

// The classes of `ranks` positions running `segments` to simulate instead of the positions, where lumping is allowed:
// at most `most` of them, and fewer than the positions.
std::optional<lumping::Lumping> lump_with(int ranks, std::span<const Schedule* const> segments,
                                          const FlowOptions& options, std::size_t most,
                                          const lumping::UnitHints& hints) {
  if (!options.lump_ranks || !options.contention || ranks < 4) return std::nullopt;  // (lumped: always shared)
  std::optional<lumping::Lumping> lumped = lumping::find_classes(ranks, segments, options, most, hints);
  if (lumped && lumped->classes() >= static_cast<std::size_t>(ranks)) return std::nullopt;  // (nothing to gain)
  return lumped;
}

// Whether the full engine runs the schedule's repetitions in rounds (FlowOptions::rounds): it has a step repeated in
// lockstep (a ring's rotation) and no collective library's eager messages.
bool runs_in_rounds(const Schedule& s, const FlowOptions& options) {
  return options.rounds &&
         std::any_of(s.repeats.begin(), s.repeats.end(), [](const StepRepeat& r) { return r.lockstep; }) &&
         !segment_library_cost(options, s).active;
}

// A collective or a data-parallel step: at most a sixteenth as many classes as ranks (or 16). The lumped engine
// recomputes every moving flow's rate at each instant, so with hundreds of classes that end their steps at different
// times (butterfly on 4096 V100s: 512) the full engine's local updates win (5.7 s against 0.5 s). Schedules run in
// rounds are not lumped: the full engine skips their repeated rounds in lockstep, which costs less than finding
// classes. (A library's ring or a tree's pipeline has no rounds: its every message is simulated, by class if it can.)
std::optional<lumping::Lumping> lump(int ranks, std::span<const Schedule* const> segments, const FlowOptions& options) {
  if (std::any_of(segments.begin(), segments.end(), [&](const Schedule* s) { return runs_in_rounds(*s, options); })) {
    return std::nullopt;
  }
  return lump_with(ranks, segments, options, std::max<std::size_t>(16, static_cast<std::size_t>(ranks) / 16), {});
}

// A training step of several streams or stages in classes: units of one stream and stage start alike, and the units
// of a rank are driven together, so a class of units belongs to one class of ranks (UnitHints). The ranks of a class
// of ranks run alike (the replicas of a stage, its tensor ranks where the cluster is symmetric): one is driven.
struct LumpedStep {
  lumping::Lumping lumping;
  DrivenRanks driven;
};
// The steps an engine processes in one run of `program` by `ranks` (every rank for the full engine, a
// representative of each class for the lumped one): their units' steps in each segment, as often as the stage uses
// the segment (a tensor allreduce twice per micro-batch, a bucket once, ...); with `repetitions`, every repetition of
// a compact step, without, the stored steps only (what an engine that skips the repetitions run in lockstep runs).
double program_steps(const StepProgram& p, std::span<const int> ranks, bool repetitions) {
  auto steps = [&](std::int64_t segment, int unit) {
    if (segment < 0 || unit < 0) return 0.0;
    const Schedule& s = *p.segments[static_cast<std::size_t>(segment)];
    const std::uint64_t begin = s.rank_begin[static_cast<std::size_t>(unit)];
    const std::uint64_t end = s.rank_begin[static_cast<std::size_t>(unit) + 1];
    double n = 0;
    for (std::uint64_t i = begin; i < end; ++i)
      n += i == begin || s.ops[i].starts_step() ? 1 : 0;
    if (repetitions) {
      for (std::size_t r = s.first_repeat_from(begin); r < s.repeats.size() && s.repeats[r].op < end; ++r)
        n += s.repeats[r].count;
    }
    return n;
  };
  const double m = p.micro_batches;
  double total = 0;
  for (const int rank : ranks) {
    const StageStep& st = p.stage_of_rank(rank);
    auto unit = [&](Stream k) { return p.stream_base[static_cast<std::size_t>(k)] < 0 ? -1 : p.unit(rank, k); };
    for (const LayerStep& layer : st.layers)
      total += 2 * m * steps(layer.tensor_segment, unit(Stream::compute));
    for (const std::size_t b : st.bucket_segment)
      total += steps(static_cast<std::int64_t>(b), unit(Stream::reduce));
    for (const std::size_t g : st.gather_segment)
      total += 2 * steps(static_cast<std::int64_t>(g), unit(Stream::gather));
    total += m * (steps(st.send_forward_segment, unit(Stream::send_forward)) +
                  steps(st.receive_forward_segment, unit(Stream::receive_forward)) +
                  steps(st.send_backward_segment, unit(Stream::send_backward)) +
                  steps(st.receive_backward_segment, unit(Stream::receive_backward)));
  }
  return total;
}

std::optional<LumpedStep> lump_step(const StepProgram& program, const FlowOptions& options) {
  const auto units = static_cast<std::size_t>(program.units);
  std::vector<std::uint64_t> key(units, 0);
  std::vector<std::uint32_t> owner(units, 0);
  int first_stream = -1;
  for (std::size_t k = 0; k < stream_count; ++k) {
    if (program.stream_base[k] < 0) continue;
    if (first_stream < 0) first_stream = static_cast<int>(k);
    for (int r = 0; r < program.ranks; ++r) {
      const auto u = static_cast<std::size_t>(program.unit(r, static_cast<Stream>(k)));
      key[u] = (static_cast<std::uint64_t>(k) + 1) << 32 | program.stage_index(r);
      owner[u] = static_cast<std::uint32_t>(r);
    }
  }
  if (first_stream < 0) return std::nullopt;
  // a collective library's other channels: more units of the reduce stream's rank. A class may hold several channels'
  // units (the channels' rings are alike but for where they cross nodes); its units' owners are of one class of
  // ranks (the hints), and starting it starts them all, so a driven rank starts each of its channels' classes once.
  const int reduce_base = program.stream_base[static_cast<std::size_t>(Stream::reduce)];
  const int channels = reduce_base >= 0 ? program.reduce_channels : 1;
  auto channel_unit = [&](int r, int c) { return static_cast<std::size_t>(reduce_base + c * program.ranks + r); };
  for (int c = 1; c < channels; ++c) {
    for (int r = 0; r < program.ranks; ++r) {
      key[channel_unit(r, c)] = key[channel_unit(r, 0)];
      owner[channel_unit(r, c)] = static_cast<std::uint32_t>(r);
    }
  }
  const lumping::UnitHints hints{key, owner, static_cast<std::size_t>(program.ranks)};
  // (at most a class per 16 units: fewer units a class never paid in the layouts measured)
  std::optional<lumping::Lumping> lumped =
      lump_with(program.units, program.segments, options, std::max<std::size_t>(16, units / 16), hints);
  if (!lumped) return std::nullopt;
  LumpedStep out{std::move(*lumped), {}};
  // A driven rank per class of ranks: ranks whose units fall in the same classes (with a library's channels, the same
  // set of classes over all their reduce units: a rank's channel 0 may be alike another's channel 1)
  std::map<std::vector<int>, int> driven_of;
  std::vector<char> owned(out.lumping.classes(), 0);  // classes already given to a driven rank
  for (int r = 0; r < program.ranks; ++r) {
    std::array<int, stream_count> classes{-1, -1, -1, -1, -1, -1, -1};
    for (std::size_t k = 0; k < stream_count; ++k) {
      if (program.stream_base[k] >= 0) {
        classes[k] =
            static_cast<int>(out.lumping.class_of[static_cast<std::size_t>(program.unit(r, static_cast<Stream>(k)))]);
      }
    }
    std::vector<int> reduce_set;  // with channels: the classes of all its reduce units, each once
    for (int c = 0; channels > 1 && c < channels; ++c)
      reduce_set.push_back(static_cast<int>(out.lumping.class_of[channel_unit(r, c)]));
    std::sort(reduce_set.begin(), reduce_set.end());
    reduce_set.erase(std::unique(reduce_set.begin(), reduce_set.end()), reduce_set.end());
    std::vector<int> identity(classes.begin(), classes.end());
    if (channels > 1) {
      identity[static_cast<std::size_t>(Stream::reduce)] = -1;
      identity.insert(identity.end(), reduce_set.begin(), reduce_set.end());
    }
    identity.push_back(static_cast<int>(program.stage_index(r)));
    const auto [at, added] = driven_of.try_emplace(identity, static_cast<int>(out.driven.rank.size()));
    if (!added) continue;   // (a rank alike one already driven: the same classes, started by it)
    std::vector<int> more;  // its other channels' classes: the set but the one its reduce stream's unit is in
    if (channels > 1) {
      more = reduce_set;
      std::erase(more, classes[static_cast<std::size_t>(Stream::reduce)]);
    }
    out.driven.rank.push_back(r);
    out.driven.unit.push_back(classes);
    out.driven.more_reduce_units.push_back(more);
    for (const std::span<const int> list : {std::span<const int>(classes), std::span<const int>(more)}) {
      for (const int c : list) {  // a class of units serves one driven rank and stream (the hints make it so)
        if (c < 0) continue;
        if (owned[static_cast<std::size_t>(c)]) return std::nullopt;
        owned[static_cast<std::size_t>(c)] = 1;
      }
    }
  }
  std::vector<int> all(static_cast<std::size_t>(program.ranks));
  std::iota(all.begin(), all.end(), 0);
  const double full_steps = program_steps(program, all, false);
  // (both engines skip the repetitions of a step repeated in lockstep that run alone, in rounds)
  const double lumped_steps = program_steps(program, out.driven.rank, !(options.rounds && options.skip_repeats));
  // The lumped engine pays more per step (it recomputes every moving class's rate at each instant, and classes whose
  // rounds drift apart multiply its instants): lumped when it has 8 times fewer steps to run. Measured on gpt2-xl-3d's
  // layouts (docs/benchmarks.md): 512 d x 4 t x 4 p on 8192 H100s (13x fewer) 8.1 s lumped against 11.5 s in full; 512
  // d x 4 t x 2 p on 4096 (4.3x) 12.4 s against 4.8 s.
  if (!options.lump_always && full_steps < 8 * lumped_steps) return std::nullopt;
  return out;
}

// Runs `units` ranks (or classes of ranks) through segment 0 from time 0: when each one finished.
std::vector<double> run_once(Network& engine, std::size_t units, const char* what) {
  std::vector<double> finish(units, 0.0);
  for (std::size_t u = 0; u < units; ++u)
    engine.start_segment(static_cast<int>(u), 0, 0.0);
  engine.run([&](int unit) { finish[static_cast<std::size_t>(unit)] = engine.now(); });
  if (const std::size_t n = engine.inside_segments(); n > 0) {
    throw std::runtime_error("flow executor: deadlock: " + std::to_string(n) + " " + what + " never finished");
  }
  return finish;
}

// Runs the classes of a Lumping once: every rank finishes when its class does.
ExecutionResult run_classes(const lumping::Lumping& lumped, const FlowOptions& o) {
  ExecutionResult result;
  lumping::LumpedEngine engine(lumped, o);
  const std::vector<double> finish = run_once(engine, lumped.classes(), "classes of ranks");
  result.rank_finish_s.reserve(lumped.class_of.size());
  for (const std::uint32_t c : lumped.class_of)
    result.rank_finish_s.push_back(finish[c]);
  result.messages = lumped.messages;
  result.bytes_sent = lumped.bytes_sent;
  result.event_batches = engine.batches();
  result.rank_classes = lumped.classes();
  return result;
}

void check_placement(int ranks, const FlowOptions& options, const char* what) {
  if ((options.topology != nullptr || !options.accelerator_of.empty()) &&
      options.accelerator_of.size() != static_cast<std::size_t>(ranks)) {
    throw std::invalid_argument(std::string("flow executor: ") + what + " has " + std::to_string(ranks) +
                                " ranks but " + std::to_string(options.accelerator_of.size()) +
                                " are placed on the cluster");
  }
}

}  // namespace

namespace {

// The flow engine with its own copy of the options it reads by reference.
class OwnedFlowNetwork final : public Network {
public:
  OwnedFlowNetwork(int units, std::span<const Schedule* const> segments, const FlowOptions& options)
      : placed_(options, units), engine_(units, segments, placed_.options) {}
  double now() const override { return engine_.now(); }
  void start_segment(int unit, std::size_t segment, double release_s) override {
    engine_.start_segment(unit, segment, release_s);
  }
  void run(const std::function<void(int)>& on_done) override { engine_.run(on_done); }
  std::size_t inside_segments() const override { return engine_.inside_segments(); }

private:
  Placed<FlowOptions> placed_;
  FlowEngine engine_;
};

}  // namespace

std::unique_ptr<Network> make_flow_network(int units, std::span<const Schedule* const> segments,
                                           const FlowOptions& options) {
  check_placement(units, options, "the network");
  for (const Schedule* segment : segments) {
    if (std::string problem = check_well_formed(*segment, true); !problem.empty()) {
      throw std::invalid_argument("flow executor: " + problem);
    }
  }
  return std::make_unique<OwnedFlowNetwork>(units, segments, options);
}

ExecutionResult run_flow(const Schedule& schedule, const FlowOptions& options) {
  if (std::string problem = check_well_formed(schedule, true); !problem.empty()) {
    throw std::invalid_argument("flow executor: " + problem);
  }
  check_placement(schedule.ranks, options, "the schedule");
  const auto started = std::chrono::steady_clock::now();
  const Placed<FlowOptions> on(options, schedule.ranks);
  const FlowOptions& o = on.options;
  const Schedule* const segments[] = {&schedule};
  ExecutionResult result;
  if (auto lumped = lump(schedule.ranks, segments, o)) {
    result = run_classes(*lumped, o);
  } else {
    FlowEngine engine(schedule.ranks, segments, o);
    if (o.progress) engine.report_progress_of(expanded_send_count(schedule));
    result.rank_finish_s = run_once(engine, static_cast<std::size_t>(schedule.ranks), "ranks");
    result.messages = engine.messages();
    result.bytes_sent = engine.bytes_sent();
    result.event_batches = engine.batches();
    result.skipped_steps = engine.skipped_steps();
  }
  result.time_s = *std::max_element(result.rank_finish_s.begin(), result.rank_finish_s.end());
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

std::optional<ExecutionResult> run_flow_all_pairs(const AllPairs& pairs, const FlowOptions& options, Protocol protocol,
                                                  lumping::AllPairsFit allowed, lumping::AllPairsFit* fit) {
  if (!options.lump_ranks || !options.contention) {
    throw std::invalid_argument(
        "flow executor: an all-pairs algorithm without its messages runs only in classes of ranks, with contention");
  }
  check_placement(pairs.ranks, options, "the schedule");
  const auto started = std::chrono::steady_clock::now();
  const Placed<FlowOptions> on(options, pairs.ranks);
  const FlowOptions& o = on.options;
  const SegmentLibraryCost library =
      protocol == Protocol::none
          ? SegmentLibraryCost{}
          : segment_library_cost(o, protocol, LibraryAlgorithm::ring, library_call(o, pairs).nodes, 1);
  std::optional<lumping::Lumping> lumped;
  try {
    lumped = lumping::all_pairs_classes(pairs, o, library, allowed, fit);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("flow executor: ") + e.what());
  }
  if (!lumped) return std::nullopt;
  ExecutionResult result = run_classes(*lumped, o);
  result.time_s =
      result.rank_finish_s.empty() ? 0.0 : *std::max_element(result.rank_finish_s.begin(), result.rank_finish_s.end());
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

StepRun run_flow_step(const StepProgram& program, const FlowOptions& options, RunTrace* trace) {
  if (std::string problem = check_step_program(program); !problem.empty()) {
    throw std::invalid_argument("training step: " + problem);
  }
  check_placement(program.units, options, "the training step");
  for (const Schedule* segment : program.segments) {
    if (std::string problem = check_well_formed(*segment, true); !problem.empty()) {
      throw std::invalid_argument("training step: " + problem);
    }
  }
  const Placed<FlowOptions> on(options, program.units);
  const FlowOptions& placed_options = on.options;
  if (!program.helper_units.empty()) {
    // (rank 0 alone starts the helper units: a class of ranks would start them once for each of its ranks' classes)
  } else if (program.noise != nullptr) {
    // (ranks that draw their own times do not run alike: every rank is simulated)
  } else if (program.units == program.ranks && program.stages.size() == 1) {
    if (auto lumped = lump(program.units, program.segments, placed_options)) {
      lumping::LumpedEngine engine(*lumped, placed_options);
      DrivenRanks driven;  // (one stream: a class of units is a class of ranks)
      for (std::size_t c = 0; c < lumped->classes(); ++c) {
        driven.rank.push_back(static_cast<int>(lumped->representative[c]));
        driven.unit.emplace_back().fill(-1);
        for (std::size_t k = 0; k < stream_count; ++k) {
          if (program.stream_base[k] >= 0) driven.unit.back()[k] = static_cast<int>(c);
        }
      }
      StepRun run = drive_step(program, engine, driven, "flow executor (classes of ranks)", trace);
      run.batches = engine.batches();
      return run;
    }
  } else if (auto lumped = lump_step(program, placed_options)) {
    lumping::LumpedEngine engine(lumped->lumping, placed_options);
    StepRun run = drive_step(program, engine, lumped->driven, "flow executor (classes of ranks)", trace);
    run.batches = engine.batches();
    return run;
  }
  FlowOptions o = placed_options;
  if (program.units != program.ranks) o.segment_rounds = true;
  FlowEngine engine(program.units, program.segments, o);
  StepRun run = drive_step(program, engine, "flow executor", trace);
  run.batches = engine.batches();
  return run;
}

TrainingResult run_flow_training(const TrainingProgram& program, int ranks, const FlowOptions& options) {
  check_placement(ranks, options, "the training program");
  if (std::string problem =
          check_training_program(program, ranks, options.topology != nullptr ? options.accelerator_of.size() : 0);
      !problem.empty()) {
    throw std::invalid_argument("training step: " + problem);
  }
  std::vector<const Schedule*> buckets;
  for (const Schedule& bucket : program.buckets) {
    if (std::string problem = check_well_formed(bucket, true); !problem.empty()) {
      throw std::invalid_argument("training step: " + problem);
    }
    buckets.push_back(&bucket);
  }
  const auto started = std::chrono::steady_clock::now();
  const Placed<FlowOptions> on(options, ranks);
  const FlowOptions& placed_options = on.options;
  TrainingResult result;
  if (program.reduce_channels > 1 || !program.helper_endpoints.empty()) {
    // a library's channels and switch helpers: units of their own, on their ranks' accelerators and on switches
    FlowOptions o = placed_options;
    o.accelerator_of = training_unit_accelerators(program, placed_options.accelerator_of);
    o.segment_rounds = true;
    // channels without helpers, by classes of units where the cluster is symmetric (each driven rank starts its
    // channels' classes); switch helpers, started by rank 0 alone, and per-rank variability run every unit
    const StepProgram step = data_parallel_step(program, ranks);
    std::optional<LumpedStep> lumped;
    if (program.helper_endpoints.empty() && program.noise == nullptr) lumped = lump_step(step, o);
    if (lumped) {
      lumping::LumpedEngine engine(lumped->lumping, o);
      result = training_result(program, drive_step(step, engine, lumped->driven, "flow executor (classes of ranks)"));
      result.rank_classes = lumped->lumping.classes();
    } else {
      FlowEngine engine(training_units(program, ranks), buckets, o);
      result = training_result(program, drive_step(step, engine, "flow executor"));
    }
  } else if (auto lumped = program.noise == nullptr ? lump(ranks, buckets, placed_options) : std::nullopt) {
    // every class's ranks run the same steps (not with per-rank variability)
    lumping::LumpedEngine engine(*lumped, placed_options);
    result = drive_training(program, engine, static_cast<int>(lumped->classes()), "flow executor (classes of ranks)");
    result.rank_classes = lumped->classes();
  } else {
    FlowEngine engine(ranks, buckets, placed_options);
    result = drive_training(program, engine, ranks, "flow executor");
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace dtsim
