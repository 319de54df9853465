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
#include "sim/simgrid_internal.hpp"

namespace dtsim {

namespace {

using namespace simgrid_detail;

// What every actor of one training run shares (SimGrid runs them one at a time: no locking).
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
  void span(int rank, SpanKind kind, std::uint64_t bytes, double start_s) {
    if (trace != nullptr) trace->spans.push_back({rank, kind, bytes, start_s, sg4::Engine::get_clock()});
  }
  void transfer(int src, int dst, std::uint64_t bytes, const sg4::CommPtr& comm) {
    if (trace != nullptr)
      trace->transfers.push_back({src, dst, bytes, comm->get_start_time(), comm->get_finish_time()});
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

  // Records an evaluation point when `epoch` has passed the next one.
  void maybe_evaluate(const Mlp& model, double epoch, bool force = false) {
    if (epoch + 1e-9 < next_eval_epoch && !(force && (report.points.empty() || report.points.back().epoch < epoch))) {
      return;
    }
    EvalPoint p;
    p.epoch = epoch;
    p.time_s = sg4::Engine::get_clock();
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

  Worker(const TrainConfig& c, int batch)
      : model(c.layers, c.seed),
        sgd(model.parameter_count()),
        gradient(model.parameter_count(), 0.0F),
        inputs(static_cast<std::size_t>(batch) * static_cast<std::size_t>(c.layers.front())),
        labels(static_cast<std::size_t>(batch)) {}

  // Computes the gradient sum of samples [first, first + batch) of the stream and sleeps for its compute time.
  void compute(Run& run, std::uint64_t first, int batch, int rank) {
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
    const double start_s = sg4::Engine::get_clock();
    sg4::this_actor::sleep_for(seconds);
    run.span(rank, SpanKind::gradient, 0, start_s);
  }
};

// A gradient pushed to, or weights pulled from, the parameter server.
struct Message {
  int worker = 0;
  std::uint64_t version = 0;  // the server version the weights were (or the gradient was computed from)
  bool stop = false;
  std::vector<float> values;
};

std::uint64_t steps_per_epoch(const Run& run) { return static_cast<std::uint64_t>(run.train.count / run.config.batch); }

void run_allreduce(Run& run, int ranks, const std::vector<sg4::Host*>& hosts, const Schedule& schedule,
                   const std::vector<RankMailboxes>& mailboxes, std::vector<std::unique_ptr<Worker>>& workers) {
  const TrainConfig& c = run.config;
  const auto total_steps =
      static_cast<std::uint64_t>(std::floor(c.epochs * static_cast<double>(steps_per_epoch(run)) + 1e-9));
  for (int r = 0; r < ranks; ++r) {
    sg4::Actor::create(
        "worker" + std::to_string(r), hosts[static_cast<std::size_t>(r)],
        [&run, &schedule, &mailboxes, &workers, r, total_steps] {
          const TrainConfig& cfg = run.config;
          Worker* w = r < cfg.workers ? workers[static_cast<std::size_t>(r)].get() : nullptr;
          Payload helper_buffer;  // server ranks of the ps schedule hold no data
          for (std::uint64_t step = 0; step < total_steps; ++step) {
            Payload* buffer = &helper_buffer;
            if (w != nullptr) {
              const std::uint64_t first =
                  step * static_cast<std::uint64_t>(cfg.batch) + static_cast<std::uint64_t>(r * run.worker_batch);
              w->compute(run, first, run.worker_batch, r);
              buffer = &w->gradient;
            } else {
              helper_buffer.assign(schedule.bytes / 4, 0.0F);
            }
            const double allreduce_start = sg4::Engine::get_clock();
            execute_steps(schedule, schedule.rank_ops(r), mailboxes[static_cast<std::size_t>(r)], buffer, 1.0, {},
                          run.trace);
            run.span(r, SpanKind::allreduce, schedule.bytes, allreduce_start);
            if (w == nullptr) continue;
            const double epoch =
                static_cast<double>((step + 1) * static_cast<std::uint64_t>(cfg.batch)) / run.train.count;
            w->sgd.step(w->model.parameters(), w->gradient, cfg.batch, cfg.sgd, run.learning_rate(epoch));
            if (r == 0) {
              ++run.report.updates;
              run.report.staleness_histogram.resize(1);
              ++run.report.staleness_histogram[0];
              run.maybe_evaluate(w->model, epoch);
            }
          }
          if (r == 0) {
            const double end =
                static_cast<double>(total_steps * static_cast<std::uint64_t>(cfg.batch)) / run.train.count;
            run.maybe_evaluate(w->model, end, true);  // the end of training is always a point
            const auto p = w->model.parameters();
            run.report.final_parameters.assign(p.begin(), p.end());
          }
        });
  }
}

void run_parameter_server(Run& run, const std::vector<sg4::Host*>& hosts,
                          std::vector<std::unique_ptr<Worker>>& workers) {
  const TrainConfig& c = run.config;
  const int w_count = c.workers;
  sg4::Mailbox* inbox = sg4::Mailbox::by_name("server");
  std::vector<sg4::Mailbox*> reply(static_cast<std::size_t>(w_count));
  for (int r = 0; r < w_count; ++r)
    reply[static_cast<std::size_t>(r)] = sg4::Mailbox::by_name("w" + std::to_string(r));
  const std::size_t params = workers.front()->model.parameter_count();
  const double message_bytes = static_cast<double>(params) * 4.0;
  // samples are handed out in order as workers start computing; the server counts the updates it applied
  auto cursor = std::make_shared<std::uint64_t>(0);
  const auto target_updates =
      static_cast<std::uint64_t>(std::floor(c.epochs * static_cast<double>(run.train.count) / run.worker_batch + 1e-9));

  for (int r = 0; r < w_count; ++r) {
    sg4::Actor::create("worker" + std::to_string(r), hosts[static_cast<std::size_t>(r)],
                       [&run, &workers, inbox, reply, r, cursor, message_bytes] {
                         Worker& w = *workers[static_cast<std::size_t>(r)];
                         std::uint64_t version = 0;
                         for (;;) {
                           const std::uint64_t first = *cursor;
                           *cursor += static_cast<std::uint64_t>(run.worker_batch);
                           w.compute(run, first, run.worker_batch, r);
                           auto push = std::make_unique<Message>();
                           push->worker = r;
                           push->version = version;
                           push->values = w.gradient;
                           const double exchange_start = sg4::Engine::get_clock();
                           const sg4::CommPtr pushed = inbox->put_async(push.release(), message_bytes);
                           pushed->wait();
                           run.transfer(r, run.config.workers, static_cast<std::uint64_t>(message_bytes), pushed);
                           const std::unique_ptr<Message> pulled(reply[static_cast<std::size_t>(r)]->get<Message>());
                           run.span(r, SpanKind::exchange, static_cast<std::uint64_t>(message_bytes), exchange_start);
                           if (pulled->stop) return;
                           version = pulled->version;
                           std::copy(pulled->values.begin(), pulled->values.end(), w.model.parameters().begin());
                         }
                       });
  }
  sg4::Actor::create(
      "server", hosts[static_cast<std::size_t>(w_count)],
      [&run, &workers, inbox, reply, target_updates, message_bytes, w_count] {
        const TrainConfig& cfg = run.config;
        Mlp model = workers.front()->model;  // the same initial weights as every worker
        Sgd sgd(model.parameter_count());
        std::uint64_t version = 0;
        std::vector<std::uint64_t> clock(static_cast<std::size_t>(w_count), 0);
        std::deque<std::unique_ptr<Message>> held;  // ssp: replies waiting for slow workers
        std::vector<sg4::CommPtr> sends;
        std::vector<std::pair<int, std::uint64_t>> sent_to;  // the worker and bytes of each of `sends`
        auto send = [&](int worker, bool stop) {
          auto m = std::make_unique<Message>();
          m->worker = worker;
          m->version = version;
          m->stop = stop;
          if (!stop) m->values.assign(model.parameters().begin(), model.parameters().end());
          sends.push_back(reply[static_cast<std::size_t>(worker)]->put_async(m.release(), stop ? 8.0 : message_bytes));
          sent_to.emplace_back(worker, static_cast<std::uint64_t>(stop ? 8.0 : message_bytes));
        };
        auto epoch_now = [&] { return static_cast<double>(run.report.updates) * run.worker_batch / run.train.count; };
        Payload sum(model.parameter_count(), 0.0F);
        int stopped = 0;
        int gathered = 0;
        std::vector<int> waiting;  // sync: workers whose gradients are in `sum`
        while (stopped < w_count) {
          const std::unique_ptr<Message> m(inbox->get<Message>());
          if (run.report.updates >= target_updates) {
            send(m->worker, true);
            ++stopped;
            continue;
          }
          if (cfg.mode == TrainMode::sync_ps) {
            for (std::size_t i = 0; i < sum.size(); ++i)
              sum[i] += m->values[i];
            waiting.push_back(m->worker);
            if (++gathered < w_count) continue;
            sgd.step(model.parameters(), sum, cfg.batch, cfg.sgd, run.learning_rate(epoch_now()));
            std::fill(sum.begin(), sum.end(), 0.0F);
            gathered = 0;
            ++version;
            run.report.updates += static_cast<std::uint64_t>(w_count);
            run.report.staleness_histogram.resize(1);
            run.report.staleness_histogram[0] += static_cast<std::uint64_t>(w_count);
            for (int worker : waiting)
              send(worker, false);
            waiting.clear();
          } else {
            const std::uint64_t staleness = version - m->version;
            if (run.report.staleness_histogram.size() <= staleness)
              run.report.staleness_histogram.resize(staleness + 1);
            ++run.report.staleness_histogram[staleness];
            sgd.step(model.parameters(), m->values, run.worker_batch, cfg.sgd, run.learning_rate(epoch_now()));
            ++version;
            ++run.report.updates;
            ++clock[static_cast<std::size_t>(m->worker)];
            if (cfg.mode == TrainMode::ssp) {
              held.push_back(std::make_unique<Message>(Message{m->worker, 0, false, {}}));
              const std::uint64_t slowest = *std::min_element(clock.begin(), clock.end());
              for (auto it = held.begin(); it != held.end();) {
                if (clock[static_cast<std::size_t>((*it)->worker)] <=
                    slowest + static_cast<std::uint64_t>(cfg.staleness_bound)) {
                  send((*it)->worker, false);
                  it = held.erase(it);
                } else {
                  ++it;
                }
              }
            } else {
              send(m->worker, false);
            }
          }
          run.maybe_evaluate(model, epoch_now());
          if (run.report.updates >= target_updates) {  // release everyone held back, they will be stopped next
            for (const auto& h : held)
              send(h->worker, false);
            held.clear();
          }
        }
        for (std::size_t i = 0; i < sends.size(); ++i) {
          sends[i]->wait();
          run.transfer(w_count, sent_to[i].first, sent_to[i].second, sends[i]);
        }
        run.maybe_evaluate(model, epoch_now(), true);
        const auto p = model.parameters();
        run.report.final_parameters.assign(p.begin(), p.end());
      });
}

TrainReport simulate(const TrainConfig& c, const Dataset& train, const Dataset& test, int result_fd, bool record) {
  xbt_log_control_set("xbt_cfg.thresh:warning");
  int argc = 1;
  char name[] = "dtsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  SimGridOptions o;
  o.cost = c.network;
  o.factors = c.network_factors;
  configure_engine(o);
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
  sg4::Engine::on_deadlock_cb([result_fd] {
    send_error_to_parent(result_fd, "sgd training: deadlock in the simulation");
    ::_exit(0);
  });
  std::unique_ptr<Schedule> schedule;
  if (c.mode == TrainMode::allreduce) {
    AlgorithmOptions options;
    options.element_bytes = 4;
    // (the actors run every step written out)
    schedule = std::make_unique<Schedule>(expand(find_algorithm(c.algorithm).build(c.workers, params * 4, options)));
    const Schedule* const only[] = {schedule.get()};
    const std::vector<sg4::Host*> hosts = build_platform(only, schedule->ranks, o);
    const std::vector<RankMailboxes> mailboxes = make_mailboxes(only, schedule->ranks, o);
    run_allreduce(run, schedule->ranks, hosts, *schedule, mailboxes, workers);
    engine.run();
  } else {
    const std::vector<sg4::Host*> hosts = build_platform({}, c.workers + 1, o);
    run_parameter_server(run, hosts, workers);
    engine.run();
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
  return e;
}

TrainReport run_sgd_training(const TrainConfig& c, const Dataset& train, const Dataset& test, bool record) {
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
  int status = 0;
  const auto started = std::chrono::steady_clock::now();
  const std::string bytes =
      run_in_child([&](int fd) { write_report(fd, simulate(c, train, test, fd, record)); }, status);
  TrainReport report = read_report(bytes, status);
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace dtsim
