#include "sim/sgd_training.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "algorithms/registry.hpp"
#include "algorithms/schedule_values.hpp"
#include "sim/flow_executor.hpp"
#include "sim/simgrid_internal.hpp"

namespace dtsim {

namespace {

using namespace simgrid_detail;

// What one training run shares: the data and its order, the learning-rate schedule, the report.
struct Run {
  const TrainConfig& config;
  const Dataset& train;
  const Dataset& test;
  int worker_batch = 0;
  std::vector<std::vector<int>> order;  // a shuffled order of the training set per epoch
  TrainReport report;
  double loss_sum = 0;
  double loss_samples = 0;
  double next_eval_epoch = 0;
  Mlp::Workspace eval_workspace;

  RunTrace* trace = nullptr;  // recording: every rank's gradient and communication intervals, every message
  Run(const TrainConfig& c, const Dataset& tr, const Dataset& te) : config(c), train(tr), test(te) {}
  void span(int rank, SpanKind kind, std::uint64_t bytes, double start_s, double end_s) {
    if (trace != nullptr) trace->spans.push_back({rank, kind, bytes, start_s, end_s});
  }
  void transfer(int src, int dst, std::uint64_t bytes, double start_s, double end_s) {
    if (trace != nullptr) trace->transfers.push_back({src, dst, bytes, start_s, end_s});
  }

  int sample(std::uint64_t stream_index) const {
    const auto n = static_cast<std::uint64_t>(train.count);
    return order[std::min<std::size_t>(stream_index / n, order.size() - 1)][stream_index % n];
  }

  double learning_rate(double epoch) const {
    const double base = config.sgd.learning_rate;
    const double scaled = config.linear_scaling ? base * config.batch / config.base_batch : base;
    if (epoch < config.warmup_epochs) return base + (scaled - base) * epoch / config.warmup_epochs;
    return scaled;
  }

  // Records an evaluation point at simulated time `now_s` when `epoch` has passed the next one.
  void maybe_evaluate(const Mlp& model, double epoch, double now_s, bool force = false) {
    if (epoch + 1e-9 < next_eval_epoch && !(force && (report.points.empty() || report.points.back().epoch < epoch))) {
      return;
    }
    EvalPoint p;
    p.epoch = epoch;
    p.time_s = now_s;
    p.train_loss = loss_samples > 0 ? loss_sum / loss_samples : 0;
    p.test_accuracy =
        static_cast<double>(model.correct(test.images.data(), test.labels.data(), test.count, eval_workspace)) /
        test.count;
    report.points.push_back(p);
    if (report.time_to_target_s < 0 && p.test_accuracy >= config.target_accuracy) {
      report.time_to_target_s = p.time_s;
      report.epochs_to_target = p.epoch;
    }
    loss_sum = 0;
    loss_samples = 0;
    while (next_eval_epoch <= epoch + 1e-9)
      next_eval_epoch += config.eval_every_epochs;
  }
};

// One worker's data and kernel state.
struct Worker {
  Mlp model;
  Sgd sgd;
  Payload gradient;
  std::vector<float> inputs;
  std::vector<std::uint8_t> labels;
  Mlp::Workspace workspace;
  std::uint64_t computes = 0;  // steps computed so far (the key of its jitter draw)

  Worker(const TrainConfig& c, int batch)
      : model(c.layers, c.seed),
        sgd(model.parameter_count()),
        gradient(model.parameter_count(), 0.0F),
        inputs(static_cast<std::size_t>(batch) * static_cast<std::size_t>(c.layers.front())),
        labels(static_cast<std::size_t>(batch)) {}

  // Computes the gradient sum of samples [first, first + batch) of the stream; returns how long that takes the
  // simulated worker (a compute is local: the caller delays the worker's next message by it).
  double compute(Run& run, std::uint64_t first, int batch, int rank) {
    const int features = run.train.features;
    for (int j = 0; j < batch; ++j) {
      const auto s = static_cast<std::size_t>(run.sample(first + static_cast<std::uint64_t>(j)));
      std::memcpy(inputs.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(features),
                  run.train.images.data() + s * static_cast<std::size_t>(features),
                  static_cast<std::size_t>(features) * sizeof(float));
      labels[static_cast<std::size_t>(j)] = run.train.labels[s];
    }
    std::fill(gradient.begin(), gradient.end(), 0.0F);
    const auto started = std::chrono::steady_clock::now();
    const double loss = model.accumulate_gradient(inputs.data(), labels.data(), batch, gradient, workspace);
    const double measured = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    run.loss_sum += loss;
    run.loss_samples += batch;
    const TrainConfig& c = run.config;
    double seconds = c.seconds_per_sample < 0 ? measured : c.seconds_per_sample * batch + c.step_overhead_s;
    if (static_cast<std::size_t>(rank) < c.slowdown.size()) seconds *= c.slowdown[static_cast<std::size_t>(rank)];
    if (c.jitter.active()) {  // the worker's step-th draw (counters: the same whatever the order of events)
      seconds *= jitter_factor(c.jitter, c.seed, 0x747261696eULL, static_cast<std::uint64_t>(rank), computes, 0);
    }
    ++computes;
    return seconds;
  }
};

std::uint64_t steps_per_epoch(const Run& run) { return static_cast<std::uint64_t>(run.train.count / run.config.batch); }

// Synchronous data parallelism on a Network whose segment 0 is the allreduce Schedule. Each step every worker
// computes its gradient (local: it releases the worker's part of the allreduce that much later), the Schedule runs
// on the network, and when a rank's part is done its buffer holds the sum: the values come from run_on_values, the
// same Schedule on the real gradients (what a collective computes does not depend on when its messages move). Then
// SGD, and the next step at once: ranks are not held to a barrier, only to the allreduce's own dependencies.
class AllreduceTraining {
public:
  AllreduceTraining(Run& run, const Schedule& schedule, std::vector<std::unique_ptr<Worker>>& workers, Network& network)
      : run_(run),
        schedule_(schedule),
        workers_(workers),
        network_(network),
        step_(static_cast<std::size_t>(schedule.ranks), 0),
        started_(static_cast<std::size_t>(schedule.ranks), 0.0),
        helpers_(static_cast<std::size_t>(schedule.ranks) - workers.size()) {
    total_ =
        static_cast<std::uint64_t>(std::floor(run.config.epochs * static_cast<double>(steps_per_epoch(run)) + 1e-9));
    for (const auto& w : workers)
      buffers_.push_back(&w->gradient);
    for (Payload& h : helpers_)  // server ranks of the ps schedule hold no data
      buffers_.push_back(&h);
  }

  void run() {
    if (total_ == 0) {  // less than a step: the untrained weights are the result
      run_.maybe_evaluate(workers_.front()->model, 0.0, 0.0, true);
      const auto p = workers_.front()->model.parameters();
      run_.report.final_parameters.assign(p.begin(), p.end());
      return;
    }
    for (int r = 0; r < schedule_.ranks; ++r)
      begin_step(r);
    network_.run([this](int rank) { step_done(rank); });
    if (std::any_of(step_.begin(), step_.end(), [this](std::uint64_t s) { return s < total_; })) {
      throw std::runtime_error("sgd training: deadlock: " + std::to_string(network_.inside_segments()) +
                               " ranks never finished their allreduce");
    }
  }

private:
  void begin_step(int rank) {
    const auto r = static_cast<std::size_t>(rank);
    if (step_[r] >= total_) return;
    double release = network_.now();
    if (r < workers_.size()) {
      const TrainConfig& c = run_.config;
      const std::uint64_t first =
          step_[r] * static_cast<std::uint64_t>(c.batch) + r * static_cast<std::uint64_t>(run_.worker_batch);
      const double seconds = workers_[r]->compute(run_, first, run_.worker_batch, rank);
      run_.span(rank, SpanKind::gradient, 0, release, release + seconds);
      release += seconds;
    }
    started_[r] = release;
    network_.start_segment(rank, 0, release);
  }

  void step_done(int rank) {
    const auto r = static_cast<std::size_t>(rank);
    const double now = network_.now();
    if (reduced_ <= step_[r]) {  // the first rank done with this step: every rank has contributed its gradient
      for (Payload& h : helpers_)
        h.assign(schedule_.bytes / 4, 0.0F);
      run_on_values(schedule_, buffers_);
      reduced_ = step_[r] + 1;
    }
    run_.span(rank, SpanKind::allreduce, schedule_.bytes, started_[r], now);
    const std::uint64_t step = ++step_[r];
    if (r < workers_.size()) {
      const TrainConfig& c = run_.config;
      Worker& w = *workers_[r];
      const double epoch = static_cast<double>(step * static_cast<std::uint64_t>(c.batch)) / run_.train.count;
      w.sgd.step(w.model.parameters(), w.gradient, c.batch, c.sgd, run_.learning_rate(epoch));
      if (r == 0) {
        ++run_.report.updates;
        run_.report.staleness_histogram.resize(1);
        ++run_.report.staleness_histogram[0];
        run_.maybe_evaluate(w.model, epoch, now);
        if (step == total_) {
          run_.maybe_evaluate(w.model, epoch, now, true);  // the end of training is always a point
          const auto p = w.model.parameters();
          run_.report.final_parameters.assign(p.begin(), p.end());
        }
      }
    }
    begin_step(rank);
  }

  Run& run_;
  const Schedule& schedule_;
  std::vector<std::unique_ptr<Worker>>& workers_;
  Network& network_;
  std::uint64_t total_ = 0;
  std::vector<std::uint64_t> step_;  // by rank: steps done
  std::vector<double> started_;      // by rank: when its part of the current allreduce was released
  std::vector<Payload> helpers_;
  std::vector<Payload*> buffers_;  // by rank: what run_on_values reduces (the workers' gradients, then the helpers')
  std::uint64_t reduced_ = 0;      // steps whose values are reduced
};

// The parameter server's messages as segments of a Network: per worker w, its push (w to the server, the gradient),
// pull (the weights back) and stop (8 bytes), each one message (StepProgram::connect_stages' two-rank broadcast,
// placed on the two units); then one segment in which no unit does anything, which a worker runs to wait for the end
// of its compute. The server has a unit per worker (positions workers + w), all on one host and so on one link.
enum class PsSegment : std::size_t { push, pull, stop };
constexpr std::size_t segments_per_worker = 3;
std::size_t ps_segment(int worker, PsSegment kind) {
  return static_cast<std::size_t>(worker) * segments_per_worker + static_cast<std::size_t>(kind);
}
std::size_t wait_segment(int workers) { return static_cast<std::size_t>(workers) * segments_per_worker; }

std::vector<Schedule> ps_segments(int workers, std::uint64_t message_bytes) {
  const int units = 2 * workers;
  const AlgorithmInfo& broadcast = find_algorithm("tree", Collective::broadcast);
  const Schedule weights = broadcast.build(2, message_bytes, AlgorithmOptions{});
  const Schedule stop = broadcast.build(2, 8, AlgorithmOptions{});
  std::vector<Schedule> segments;
  for (int w = 0; w < workers; ++w) {
    const int push[] = {w, workers + w}, reply[] = {workers + w, w};
    segments.push_back(place_groups(weights, push, units));
    segments.push_back(place_groups(weights, reply, units));
    segments.push_back(place_groups(stop, reply, units));
  }
  ScheduleBuilder wait(Collective::broadcast, "wait", units, 0, {});
  for (int r = 0; r < units; ++r)
    wait.begin_rank(r);
  segments.push_back(wait.finish());
  return segments;
}

// Workers push gradients to the server and pull its weights: synchronous (the server waits for every worker, then
// replies to all), asynchronous (each gradient applied on arrival, the weights sent straight back) or with stale
// synchronous parallelism (a reply held while the worker is more than the bound ahead of the slowest). The server
// takes one push at a time, in the order the workers became ready (a mailbox's order); its replies leave at once.
class ParameterServerTraining {
public:
  ParameterServerTraining(Run& run, std::vector<std::unique_ptr<Worker>>& workers, Network& network)
      : run_(run),
        workers_(workers),
        network_(network),
        w_count_(static_cast<int>(workers.size())),
        model_(workers.front()->model),  // the same initial weights as every worker
        sgd_(model_.parameter_count()),
        sum_(model_.parameter_count(), 0.0F),
        clock_(workers.size(), 0),
        worker_(workers.size()) {
    message_bytes_ = static_cast<std::uint64_t>(model_.parameter_count()) * 4;
    target_updates_ = static_cast<std::uint64_t>(
        std::floor(run.config.epochs * static_cast<double>(run.train.count) / run.worker_batch + 1e-9));
  }

  void run() {
    for (int w = 0; w < w_count_; ++w)
      compute(w);
    network_.run([this](int unit) { unit < w_count_ ? worker_done(unit) : server_done(unit - w_count_); });
    if (stopped_ < w_count_ || outstanding_ > 0) {
      throw std::runtime_error("sgd training: deadlock: " + std::to_string(network_.inside_segments()) +
                               " exchanges never finished");
    }
    run_.maybe_evaluate(model_, epoch_now(), network_.now(), true);
    const auto p = model_.parameters();
    run_.report.final_parameters.assign(p.begin(), p.end());
  }

private:
  enum class Phase : std::uint8_t { computing, pushing, waiting, stopped };
  enum class ServerSide : std::uint8_t { idle, receiving, replying };  // what the worker's server unit is doing
  struct WorkerState {
    Phase phase = Phase::computing;
    ServerSide server = ServerSide::idle;
    std::uint64_t version = 0;  // of the weights it computes on
    double exchange_start = 0;
    double push_start = 0;
    bool reply_due = false;  // a reply whose receive waits for the worker's push to end (the same instant)
    bool reply_stop = false;
    std::uint64_t reply_version = 0;
    std::vector<float> reply;  // the weights on their way
    double reply_start = 0;
  };

  double epoch_now() const { return static_cast<double>(run_.report.updates) * run_.worker_batch / run_.train.count; }
  int server_unit(int w) const { return w_count_ + w; }

  void compute(int w) {
    WorkerState& ws = worker_[static_cast<std::size_t>(w)];
    const double now = network_.now();
    const std::uint64_t first = cursor_;  // samples are handed out in order as workers start computing
    cursor_ += static_cast<std::uint64_t>(run_.worker_batch);
    const double seconds = workers_[static_cast<std::size_t>(w)]->compute(run_, first, run_.worker_batch, w);
    run_.span(w, SpanKind::gradient, 0, now, now + seconds);
    ws.phase = Phase::computing;
    network_.start_segment(w, wait_segment(w_count_), now + seconds);
  }

  void worker_done(int w) {
    WorkerState& ws = worker_[static_cast<std::size_t>(w)];
    const double now = network_.now();
    switch (ws.phase) {
      case Phase::computing:  // ready to push: the server takes it when free
        ws.exchange_start = now;
        ws.phase = Phase::pushing;
        ready_.push_back(w);
        next_push();
        break;
      case Phase::pushing:
        ws.phase = Phase::waiting;
        if (ws.reply_due) receive_reply(w);
        break;
      case Phase::waiting:
        run_.span(w, SpanKind::exchange, message_bytes_, ws.exchange_start, now);
        if (ws.reply_stop) {
          ws.phase = Phase::stopped;
          break;
        }
        ws.version = ws.reply_version;
        std::copy(ws.reply.begin(), ws.reply.end(), workers_[static_cast<std::size_t>(w)]->model.parameters().begin());
        compute(w);
        break;
      case Phase::stopped: throw std::logic_error("sgd training: a stopped worker ended a segment");
    }
  }

  void next_push() {
    if (server_busy_ || ready_.empty()) return;
    const int w = ready_.front();
    ready_.pop_front();
    server_busy_ = true;
    worker_[static_cast<std::size_t>(w)].server = ServerSide::receiving;
    worker_[static_cast<std::size_t>(w)].push_start = network_.now();
    network_.start_segment(w, ps_segment(w, PsSegment::push), network_.now());
    network_.start_segment(server_unit(w), ps_segment(w, PsSegment::push), network_.now());
  }

  void server_done(int w) {
    WorkerState& ws = worker_[static_cast<std::size_t>(w)];
    const double now = network_.now();
    if (ws.server == ServerSide::receiving) {  // w's push arrived
      ws.server = ServerSide::idle;
      server_busy_ = false;
      run_.transfer(w, w_count_, message_bytes_, ws.push_start, now);
      handle_push(w);
      next_push();
      return;
    }
    ws.server = ServerSide::idle;  // a reply left
    run_.transfer(w_count_, w, ws.reply_stop ? 8 : message_bytes_, ws.reply_start, now);
    --outstanding_;
  }

  // The server's reply to w: the weights (or stop) as they are now.
  void send(int w, bool stop) {
    WorkerState& ws = worker_[static_cast<std::size_t>(w)];
    ws.reply_stop = stop;
    ws.reply_version = version_;
    if (!stop) ws.reply.assign(model_.parameters().begin(), model_.parameters().end());
    ws.reply_start = network_.now();
    ws.server = ServerSide::replying;
    ++outstanding_;
    network_.start_segment(server_unit(w), ps_segment(w, stop ? PsSegment::stop : PsSegment::pull), network_.now());
    ws.reply_due = true;
    if (ws.phase == Phase::waiting) receive_reply(w);
  }
  void receive_reply(int w) {
    WorkerState& ws = worker_[static_cast<std::size_t>(w)];
    ws.reply_due = false;
    network_.start_segment(w, ps_segment(w, ws.reply_stop ? PsSegment::stop : PsSegment::pull), network_.now());
  }

  void handle_push(int w) {
    const TrainConfig& cfg = run_.config;
    const WorkerState& ws = worker_[static_cast<std::size_t>(w)];
    const Payload& gradient = workers_[static_cast<std::size_t>(w)]->gradient;
    if (run_.report.updates >= target_updates_) {
      send(w, true);
      ++stopped_;
      return;
    }
    if (cfg.mode == TrainMode::sync_ps) {
      if (ws.version < version_) {  // backup workers: a late gradient of a step already taken, dropped
        ++run_.report.dropped_gradients;
        send(w, false);
        return;
      }
      for (std::size_t i = 0; i < sum_.size(); ++i)
        sum_[i] += gradient[i];
      waiting_.push_back(w);
      const int needed = w_count_ - cfg.backup_workers;
      if (++gathered_ < needed) return;
      sgd_.step(model_.parameters(), sum_, needed * run_.worker_batch, cfg.sgd, run_.learning_rate(epoch_now()));
      std::fill(sum_.begin(), sum_.end(), 0.0F);
      gathered_ = 0;
      ++version_;
      run_.report.updates += static_cast<std::uint64_t>(needed);
      run_.report.staleness_histogram.resize(1);
      run_.report.staleness_histogram[0] += static_cast<std::uint64_t>(needed);
      for (const int waiting : waiting_)
        send(waiting, false);
      waiting_.clear();
    } else {
      const std::uint64_t staleness = version_ - ws.version;
      if (run_.report.staleness_histogram.size() <= staleness) run_.report.staleness_histogram.resize(staleness + 1);
      ++run_.report.staleness_histogram[staleness];
      sgd_.step(model_.parameters(), gradient, run_.worker_batch, cfg.sgd, run_.learning_rate(epoch_now()));
      ++version_;
      ++run_.report.updates;
      ++clock_[static_cast<std::size_t>(w)];
      if (cfg.mode == TrainMode::ssp) {
        held_.push_back(w);
        const std::uint64_t slowest = *std::min_element(clock_.begin(), clock_.end());
        for (auto it = held_.begin(); it != held_.end();) {
          if (clock_[static_cast<std::size_t>(*it)] <= slowest + static_cast<std::uint64_t>(cfg.staleness_bound)) {
            send(*it, false);
            it = held_.erase(it);
          } else {
            ++it;
          }
        }
      } else {
        send(w, false);
      }
    }
    run_.maybe_evaluate(model_, epoch_now(), network_.now());
    if (run_.report.updates >= target_updates_) {  // release everyone held back, they will be stopped next
      for (const int held : held_)
        send(held, false);
      held_.clear();
    }
  }

  Run& run_;
  std::vector<std::unique_ptr<Worker>>& workers_;
  Network& network_;
  int w_count_;
  Mlp model_;
  Sgd sgd_;
  Payload sum_;
  std::vector<std::uint64_t> clock_;  // ssp: updates applied from each worker
  std::vector<WorkerState> worker_;
  std::uint64_t message_bytes_ = 0;
  std::uint64_t target_updates_ = 0;
  std::uint64_t cursor_ = 0;
  std::uint64_t version_ = 0;
  std::deque<int> ready_;  // workers whose push waits for the server, in the order they became ready
  bool server_busy_ = false;
  std::deque<int> held_;      // ssp: replies waiting for slow workers
  std::vector<int> waiting_;  // sync: workers whose gradients are in sum_
  int gathered_ = 0;
  int stopped_ = 0;
  int outstanding_ = 0;  // replies on their way
};

// Builds the network a run's messages move on: SimGrid (in the child process) or the flow engine.
using MakeNetwork =
    std::function<std::unique_ptr<Network>(std::span<const Schedule* const>, int units, const NetworkCost&, RunTrace*)>;

TrainReport simulate(const TrainConfig& c, const Dataset& train, const Dataset& test, bool record,
                     const MakeNetwork& make_network) {
  NetworkCost o;
  o.cost = c.network;
  o.factors = c.network_factors;
  Run run(c, train, test);
  if (record) run.trace = &run.report.trace;
  run.worker_batch = c.batch / c.workers;
  const int epochs = static_cast<int>(std::ceil(c.epochs)) + 1;
  std::uint64_t state = c.seed * 0x9E3779B97F4A7C15ULL + 12345;
  for (int e = 0; e < epochs; ++e) {
    std::vector<int> order(static_cast<std::size_t>(train.count));
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i > 1; --i) {  // Fisher-Yates with a fixed LCG: the same order everywhere
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      std::swap(order[i - 1], order[(state >> 33) % i]);
    }
    run.order.push_back(std::move(order));
  }
  run.next_eval_epoch = c.eval_every_epochs;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int r = 0; r < c.workers; ++r)
    workers.push_back(std::make_unique<Worker>(c, run.worker_batch));
  const std::size_t params = workers.front()->model.parameter_count();
  if (c.mode == TrainMode::allreduce) {
    AlgorithmOptions options;
    options.element_bytes = 4;
    const Schedule schedule = find_algorithm(c.algorithm).build(c.workers, params * 4, options);
    const Schedule* const only[] = {&schedule};
    const std::unique_ptr<Network> network = make_network(only, schedule.ranks, o, run.trace);
    AllreduceTraining(run, schedule, workers, *network).run();
  } else {
    const std::vector<Schedule> segments = ps_segments(c.workers, params * 4);
    std::vector<const Schedule*> pointers;
    for (const Schedule& s : segments)
      pointers.push_back(&s);
    for (int u = 0; u < 2 * c.workers; ++u)  // the server's units share its host
      o.accelerator_of.push_back(std::min(u, c.workers));
    const std::unique_ptr<Network> network = make_network(pointers, 2 * c.workers, o, nullptr);
    ParameterServerTraining(run, workers, *network).run();
  }
  return run.report;
}

// The report as bytes: counts, then arrays.
void write_report(int fd, const TrainReport& r) {
  const std::int32_t ok = 0;
  write_all(fd, &ok, sizeof ok);
  const std::uint64_t sizes[5] = {r.points.size(), r.staleness_histogram.size(), r.final_parameters.size(),
                                  r.trace.transfers.size(), r.trace.spans.size()};
  write_all(fd, sizes, sizeof sizes);
  const double scalars[2] = {r.time_to_target_s, r.epochs_to_target};
  write_all(fd, scalars, sizeof scalars);
  write_all(fd, &r.updates, sizeof r.updates);
  write_all(fd, r.points.data(), r.points.size() * sizeof(EvalPoint));
  write_all(fd, r.staleness_histogram.data(), r.staleness_histogram.size() * sizeof(std::uint64_t));
  write_all(fd, r.final_parameters.data(), r.final_parameters.size() * sizeof(float));
  write_all(fd, r.trace.transfers.data(), r.trace.transfers.size() * sizeof(TransferRecord));
  write_all(fd, r.trace.spans.data(), r.trace.spans.size() * sizeof(SpanRecord));
}

TrainReport read_report(const std::string& bytes, int status) {
  std::uint64_t sizes[5];
  read_child_result(bytes, status, sizes, sizeof sizes);
  TrainReport r;
  std::size_t at = sizeof(std::int32_t) + sizeof sizes;
  auto take = [&](void* to, std::size_t n) {
    if (bytes.size() < at + n) throw std::runtime_error("sgd training: truncated result from the simulation");
    std::memcpy(to, bytes.data() + at, n);
    at += n;
  };
  double scalars[2];
  take(scalars, sizeof scalars);
  r.time_to_target_s = scalars[0];
  r.epochs_to_target = scalars[1];
  take(&r.updates, sizeof r.updates);
  take_array(bytes, at, sizes[0], r.points);
  take_array(bytes, at, sizes[1], r.staleness_histogram);
  take_array(bytes, at, sizes[2], r.final_parameters);
  take_array(bytes, at, sizes[3], r.trace.transfers);  // empty without --trace
  take_array(bytes, at, sizes[4], r.trace.spans);
  if (at != bytes.size()) throw std::runtime_error("sgd training: trailing bytes in the result from the simulation");
  return r;
}

}  // namespace

TrainingEstimate estimate_training(const TrainConfig& c, double train_samples, double test_samples, double features) {
  TrainingEstimate e;
  e.parameters = Mlp::parameter_count_of(c.layers);
  double widths = 0;  // every layer's outputs: the scratch per sample of z, a and delta
  for (std::size_t l = 1; l < c.layers.size(); ++l)
    widths += c.layers[l];
  const double float_bytes = 4;
  const double workers = c.workers;
  const double worker_batch = c.workers > 0 ? static_cast<double>(c.batch) / c.workers : c.batch;
  // replica, gradient, momentum and one message's copy; the batch's inputs and its three matrices per layer
  const double per_worker = 4 * e.parameters + worker_batch * (c.layers.front() + 3 * widths);
  // parameter server: its model, momentum and sum, and one push per worker in flight; allreduce: copies in flight
  const double exchange = c.mode == TrainMode::allreduce ? workers * e.parameters : (3 + workers) * e.parameters;
  const double evaluation = 1000 * 3 * widths;  // blocks of 1000 samples
  e.memory_bytes =
      float_bytes * (workers * per_worker + exchange + evaluation + (train_samples + test_samples) * (features + 1)) +
      (std::ceil(c.epochs) + 1) * train_samples * sizeof(int);  // the shuffled orders
  const double evaluations = c.eval_every_epochs > 0 ? std::ceil(c.epochs / c.eval_every_epochs) + 1 : 1;
  // a gradient is forward and backward; an evaluation the forward third
  e.flops = Mlp::flops_per_sample_of(c.layers) * (train_samples * c.epochs + evaluations * test_samples / 3);
  // steps: every batch of every epoch; a step's messages: the allreduce's (its compact schedule counted without
  // expanding), or each worker's push and pull
  const double steps = c.batch > 0 ? std::ceil(train_samples * c.epochs / c.batch) : 0;
  double per_step = 2.0 * workers;
  if (c.mode == TrainMode::allreduce && c.workers > 1) {
    AlgorithmOptions options;
    options.element_bytes = 4;
    per_step = static_cast<double>(expanded_send_count(
        find_algorithm(c.algorithm).build(c.workers, static_cast<std::uint64_t>(e.parameters) * 4, options)));
  }
  e.messages = steps * per_step;
  return e;
}

TrainReport run_sgd_training(const TrainConfig& c, const Dataset& train, const Dataset& test, bool record,
                             TrainBackend backend) {
  if (c.workers < 1) throw std::invalid_argument("workers must be >= 1");
  if (c.batch < c.workers || c.batch % c.workers != 0) {
    throw std::invalid_argument("a batch of " + std::to_string(c.batch) + " does not split evenly over " +
                                std::to_string(c.workers) + " workers");
  }
  if (c.batch > train.count) throw std::invalid_argument("the batch is larger than the training set");
  if (c.layers.empty() || c.layers.front() != train.features) {
    throw std::invalid_argument("the first layer must have " + std::to_string(train.features) + " inputs");
  }
  if (c.layers.back() < 10) throw std::invalid_argument("the last layer needs one output per class (10)");
  // a label past the model's outputs would throw inside a SimGrid actor: refused before the simulation starts
  for (const Dataset* d : {&train, &test}) {
    const int classes = c.layers.back();
    const auto bad =
        std::find_if(d->labels.begin(), d->labels.end(), [classes](std::uint8_t l) { return l >= classes; });
    if (bad != d->labels.end()) {
      throw std::invalid_argument(std::string(d == &train ? "the training set" : "the test set") + " has label " +
                                  std::to_string(*bad) + " (sample " + std::to_string(bad - d->labels.begin()) +
                                  "), past the model's " + std::to_string(classes) + " outputs");
    }
  }
  if (!(c.epochs > 0) || !(c.eval_every_epochs > 0)) throw std::invalid_argument("epochs must be > 0");
  if (c.mode == TrainMode::ssp && c.staleness_bound < 0) throw std::invalid_argument("staleness bound must be >= 0");
  const auto started = std::chrono::steady_clock::now();
  TrainReport report;
  if (backend == TrainBackend::flow) {
    report = simulate(c, train, test, record,
                      [](std::span<const Schedule* const> segments, int units, const NetworkCost& cost, RunTrace*) {
                        return make_flow_network(units, segments, FlowOptions(cost));
                      });
  } else {
    int status = 0;
    const std::string bytes = run_in_child(
        [&](int fd) {
          xbt_log_control_set("xbt_cfg.thresh:warning");
          const MakeNetwork simgrid = [fd](std::span<const Schedule* const> segments, int units,
                                           const NetworkCost& cost, RunTrace* trace) {
            return make_simgrid_network(segments, units, SimGridOptions(cost), fd, trace);
          };
          write_report(fd, simulate(c, train, test, record, simgrid));
        },
        status);
    report = read_report(bytes, status);
  }
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace dtsim
