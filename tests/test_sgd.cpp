// The real SGD kernel and the Fashion-MNIST reader.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

#include "algorithms/registry.hpp"
#include "idx_files.hpp"
#include "models/mlp.hpp"
#include "scenarios/idx_reader.hpp"
#include "scenarios/train_file.hpp"
#include "sim/sgd_training.hpp"

using namespace dtsim;

TEST_CASE("the MLP's gradient matches finite differences") {
  const Mlp mlp({5, 4, 3}, 7);
  std::vector<float> inputs(5 * 2);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    inputs[i] = std::sin(static_cast<float>(i) * 0.7F);
  const std::uint8_t labels[2] = {2, 0};
  Mlp::Workspace w;
  std::vector<float> gradient(mlp.parameter_count(), 0.0F);
  mlp.accumulate_gradient(inputs.data(), labels, 2, gradient, w);
  Mlp probe = mlp;
  std::vector<float> scratch(mlp.parameter_count(), 0.0F);
  for (std::size_t i = 0; i < mlp.parameter_count(); i += 3) {
    const float keep = probe.parameters()[i];
    const float h = 1e-2F;
    probe.parameters()[i] = keep + h;
    const double up = probe.accumulate_gradient(inputs.data(), labels, 2, scratch, w);
    probe.parameters()[i] = keep - h;
    const double down = probe.accumulate_gradient(inputs.data(), labels, 2, scratch, w);
    probe.parameters()[i] = keep;
    CAPTURE(i);
    CHECK(gradient[i] == Approx((up - down) / (2 * h)).margin(2e-3).epsilon(2e-2));
  }
  // same seed, same weights; another seed, others
  CHECK(std::equal(mlp.parameters().begin(), mlp.parameters().end(), Mlp({5, 4, 3}, 7).parameters().begin()));
  CHECK_FALSE(std::equal(mlp.parameters().begin(), mlp.parameters().end(), Mlp({5, 4, 3}, 8).parameters().begin()));
  CHECK(mlp.parameter_count() == 5 * 4 + 4 + 4 * 3 + 3);
}

TEST_CASE("the 784-95-10 MLP reaches 85% test accuracy on Fashion-MNIST within 5 epochs on one worker") {
  const Dataset train = fashion_mnist_train();
  const Dataset test = fashion_mnist_test();
  REQUIRE(train.count == 60000);
  REQUIRE(test.count == 10000);
  REQUIRE(train.features == 784);
  Mlp mlp({784, 95, 10}, 1);
  Sgd sgd(mlp.parameter_count());
  const SgdSettings settings{0.01, 0.9, 1e-4};
  const int batch = 64;
  std::vector<int> order(static_cast<std::size_t>(train.count));
  std::iota(order.begin(), order.end(), 0);
  std::vector<float> inputs(static_cast<std::size_t>(batch) * 784);
  std::vector<std::uint8_t> labels(batch);
  std::vector<float> gradient(mlp.parameter_count());
  Mlp::Workspace w;
  Mlp::Workspace eval;
  std::uint64_t state = 42;
  double accuracy = 0;
  for (int epoch = 0; epoch < 5; ++epoch) {
    for (std::size_t i = order.size(); i > 1; --i) {  // Fisher-Yates with a fixed LCG
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      std::swap(order[i - 1], order[(state >> 33) % i]);
    }
    for (int start = 0; start + batch <= train.count; start += batch) {
      for (int j = 0; j < batch; ++j) {
        const auto s = static_cast<std::size_t>(order[static_cast<std::size_t>(start + j)]);
        std::copy_n(train.images.begin() + static_cast<std::ptrdiff_t>(s * 784), 784,
                    inputs.begin() + static_cast<std::ptrdiff_t>(j) * 784);
        labels[static_cast<std::size_t>(j)] = train.labels[s];
      }
      std::fill(gradient.begin(), gradient.end(), 0.0F);
      mlp.accumulate_gradient(inputs.data(), labels.data(), batch, gradient, w);
      sgd.step(mlp.parameters(), gradient, batch, settings, settings.learning_rate);
    }
    accuracy = static_cast<double>(mlp.correct(test.images.data(), test.labels.data(), test.count, eval)) / test.count;
    WARN("epoch " << epoch + 1 << ": test accuracy " << accuracy);
  }
  CHECK(accuracy >= 0.85);
}

TEST_CASE("IDX files: a missing file names the package, corrupt and truncated files are one-line errors") {
  CHECK_THROWS_WITH(fashion_mnist_train("/nonexistent"),
                    "/nonexistent/train-images-idx3-ubyte.gz: not found; install Debian's dataset-fashion-mnist "
                    "package (apt-get install dataset-fashion-mnist)");
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim-idx-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string labels = std::string(fashion_mnist_directory) + "/t10k-labels-idx1-ubyte.gz";
  // not gzip at all, but also not an IDX file: zlib passes plain files through, the header check refuses them
  std::ofstream(dir / "garbage.gz") << "this is not an IDX file at all";
  CHECK_THROWS_WITH(read_idx_dataset((dir / "garbage.gz").string(), labels, "p", 10),
                    Catch::EndsWith("garbage.gz: not an IDX file of 3-dimensional unsigned bytes"));
  // a gzip file cut in the middle
  {
    std::ifstream in(std::string(fashion_mnist_directory) + "/t10k-images-idx3-ubyte.gz", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir / "cut.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  CHECK_THROWS_AS(read_idx_dataset((dir / "cut.gz").string(), labels, "p", 10), DataError);
  CHECK_THROWS_WITH(read_idx_dataset((dir / "cut.gz").string(), labels, "p", 10), Catch::Contains("cut.gz: "));
  std::filesystem::remove_all(dir);
}

TEST_CASE("IDX files: a label outside the classes is refused naming the file, before any training") {
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim-idx-labels-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string images = (dir / "images").string();
  const std::string labels = (dir / "labels").string();
  test::write_idx_images(images, 4);
  test::write_idx_labels(labels, {0, 9, 3, 1});
  const Dataset good = read_idx_dataset(images, labels, "p", 10);
  CHECK(good.labels == std::vector<std::uint8_t>{0, 9, 3, 1});
  test::write_idx_labels(labels, {0, 200, 3, 1});  // one label 200 in a 10-class file
  CHECK_THROWS_WITH(
      read_idx_dataset(images, labels, "p", 10),
      labels + ": label 200 of sample 1 is not one of the 10 classes 0 to 9 (samples with such labels: 1 of 4)");
  test::write_idx_labels(labels, {255, 255, 255, 255});
  CHECK_THROWS_AS(read_idx_dataset(images, labels, "p", 10), DataError);
  CHECK_THROWS_WITH(read_idx_dataset(images, labels, "p", 10),
                    Catch::Contains("label 255 of sample 0") && Catch::Contains("(samples with such labels: 4 of 4)"));
  // a directory where a file belongs
  CHECK_THROWS_WITH(read_idx_dataset(dir.string(), labels, "p", 10), dir.string() + ": is a directory, not a file");
  // and the training itself refuses labels past the model's outputs (not an exception inside a SimGrid actor)
  Dataset bad;
  bad.count = 4;
  bad.features = 784;
  bad.images.assign(4 * 784, 0.0F);
  bad.labels = {0, 1, 12, 3};
  TrainConfig c;
  c.layers = {784, 8, 10};
  c.workers = 2;
  c.batch = 2;
  c.epochs = 1;
  CHECK_THROWS_WITH(run_sgd_training(c, bad, good),
                    "the training set has label 12 (sample 2), past the model's 10 outputs");
  std::filesystem::remove_all(dir);
}

namespace {

const Dataset& train_set() {
  static const Dataset d = fashion_mnist_train();
  return d;
}
const Dataset& test_set() {
  static const Dataset d = fashion_mnist_test();
  return d;
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0;
  double norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace

TEST_CASE("synchronous data parallelism on W workers gives one worker's weights, for every allreduce algorithm") {
  TrainConfig c;
  c.batch = 240;    // splits over 1, 3, 4, 5, 8 workers
  c.epochs = 0.04;  // 10 steps
  c.eval_every_epochs = 1;
  c.sgd = SgdSettings{0.01, 0.9, 1e-4};
  c.workers = 1;
  const TrainReport one = run_sgd_training(c, train_set(), test_set());
  REQUIRE(one.updates == 10);
  for (const AlgorithmInfo& algorithm : algorithms()) {
    if (algorithm.collective != Collective::allreduce) continue;
    for (int workers : {3, 8}) {
      CAPTURE(algorithm.name, workers);
      c.workers = workers;
      c.algorithm = std::string(algorithm.name);
      const TrainReport many = run_sgd_training(c, train_set(), test_set());
      CHECK(many.updates == 10);
      const double difference = relative_difference(many.final_parameters, one.final_parameters);
      CHECK(difference < 1e-5);
    }
  }
  c.workers = 8;
  c.mode = TrainMode::sync_ps;
  CHECK(relative_difference(run_sgd_training(c, train_set(), test_set()).final_parameters, one.final_parameters) <
        1e-5);
}

TEST_CASE("dtsim train runs on either network: the same weights, times within the engines' difference") {
  TrainConfig c;
  c.batch = 240;
  c.epochs = 0.04;  // 10 steps
  c.eval_every_epochs = 1;
  c.workers = 8;
  c.network.bandwidth_Bps = 1.25e8;  // 1 Gb/s: the exchanges cost more than the compute
  for (TrainMode mode : {TrainMode::allreduce, TrainMode::sync_ps, TrainMode::async_ps}) {
    CAPTURE(static_cast<int>(mode));
    c.mode = mode;
    const TrainReport simgrid = run_sgd_training(c, train_set(), test_set(), false, TrainBackend::simgrid);
    const TrainReport flow = run_sgd_training(c, train_set(), test_set(), false, TrainBackend::flow);
    REQUIRE(!simgrid.points.empty());
    REQUIRE(!flow.points.empty());
    CHECK(flow.updates == simgrid.updates);
    const double simgrid_s = simgrid.points.back().time_s, flow_s = flow.points.back().time_s;
    CHECK(simgrid_s > 10 * 4 * 95 * 784 / 1.25e8);  // (ten exchanges of the weights, at least)
    CHECK(flow_s == Approx(simgrid_s).epsilon(0.05));
    // synchronous training: what the collective computes does not depend on when its messages move
    if (mode != TrainMode::async_ps) CHECK(relative_difference(flow.final_parameters, simgrid.final_parameters) < 1e-6);
  }
  c.mode = TrainMode::allreduce;
  c.epochs = 0.001;  // less than a step: one evaluation of the untrained weights, which are the result
  const TrainReport none = run_sgd_training(c, train_set(), test_set(), false, TrainBackend::flow);
  CHECK(none.updates == 0);
  REQUIRE(none.points.size() == 1);
  CHECK(none.points.front().time_s == 0);
  CHECK(none.final_parameters.size() == static_cast<std::size_t>(784 * 95 + 95 + 95 * 10 + 10));
}

TEST_CASE("an asynchronous parameter server with 16 workers trains on stale gradients and needs more epochs") {
  // the same updates (16 samples each, the same learning rate and momentum); the synchronous reference is one worker
  // with a batch of 16, which the test above shows equal to 16 synchronous workers of one sample each
  TrainConfig c;
  c.sgd = SgdSettings{0.01, 0.5, 1e-4};
  c.epochs = 1.5;
  c.eval_every_epochs = 0.25;
  c.target_accuracy = 0.80;
  c.workers = 1;
  c.batch = 16;
  const TrainReport sync = run_sgd_training(c, train_set(), test_set());
  c.workers = 16;
  c.batch = 256;
  c.mode = TrainMode::async_ps;
  const TrainReport async = run_sgd_training(c, train_set(), test_set());
  CHECK(async.updates == sync.updates);
  std::uint64_t stale = 0;
  std::uint64_t total = 0;
  for (std::size_t s = 0; s < async.staleness_histogram.size(); ++s) {
    total += async.staleness_histogram[s];
    stale += s > 0 ? async.staleness_histogram[s] : 0;
  }
  CHECK(total == async.updates);
  CHECK(stale > total / 2);  // the server's link serves the workers in turn: most gradients are W-1 versions old
  CHECK(async.staleness_histogram.size() >= 16);
  REQUIRE(sync.epochs_to_target > 0);
  CHECK((async.epochs_to_target < 0 || async.epochs_to_target > sync.epochs_to_target));
  WARN("epochs to 80%: synchronous " << sync.epochs_to_target << ", asynchronous " << async.epochs_to_target);
}

TEST_CASE("docs/train.md carries the training file reference the loader uses") {
  std::ifstream file(std::string(DTSIM_SOURCE_DIR) + "/docs/train.md");
  const std::string committed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_THAT(committed, Catch::Contains(train_fields_markdown()));
}

#ifdef DTSIM_HAVE_CUDA
#include "models/mlp_cuda.hpp"
#endif

TEST_CASE("the CUDA MLP step computes the CPU kernel's gradient (where a GPU is present)") {
#ifndef DTSIM_HAVE_CUDA
  WARN("skipped: dtsim was built without CUDA (no nvcc found, or -DDTSIM_CUDA=OFF)");
#else
  std::string why;
  if (!cuda_device_available(why)) {
    WARN("skipped: " << why);
    return;
  }
  const Dataset& train = train_set();
  const Mlp mlp({784, 95, 10}, 3);
  const int batch = 128;
  std::vector<float> cpu(mlp.parameter_count(), 0.5F);  // both add to the same starting values
  std::vector<float> gpu = cpu;
  Mlp::Workspace w;
  const double cpu_loss = mlp.accumulate_gradient(train.images.data(), train.labels.data(), batch, cpu, w);
  CudaMlp device(mlp, batch);
  const double gpu_loss = device.accumulate_gradient(mlp, train.images.data(), train.labels.data(), batch, gpu);
  CHECK(gpu_loss == Approx(cpu_loss).epsilon(1e-5));
  std::vector<float> cpu_delta(cpu.size());
  std::vector<float> gpu_delta(gpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    cpu_delta[i] = cpu[i] - 0.5F;
    gpu_delta[i] = gpu[i] - 0.5F;
  }
  CHECK(relative_difference(gpu_delta, cpu_delta) < 1e-4);
#endif
}

TEST_CASE("a training run's memory estimate counts every worker's replica and the data, and grows with each") {
  TrainConfig c;  // 784-95-10, 8 workers, batch 256
  const TrainingEstimate small = estimate_training(c, 60000, 10000, 784);
  CHECK(small.parameters == 784 * 95 + 95 + 95 * 10 + 10);
  // the data set dominates: 70,000 samples of 785 floats, about 220 MB
  CHECK(small.memory_bytes > 70000.0 * 785 * 4);
  CHECK(small.memory_bytes < 70000.0 * 785 * 4 * 1.2);
  c.workers = 16;
  CHECK(estimate_training(c, 60000, 10000, 784).memory_bytes > small.memory_bytes);
  c.layers = {784, 4096, 10};
  const TrainingEstimate wide = estimate_training(c, 60000, 10000, 784);
  CHECK(wide.memory_bytes > small.memory_bytes + 16 * 4 * 4 * 784 * 4096.0);
  CHECK(wide.flops > small.flops);
}

TEST_CASE("a slow worker slows synchronous training, an asynchronous server barely notices, backup workers drop it") {
  // compute-bound: 1 ms of compute per 8-sample gradient on a fast network, a tenth of an epoch
  TrainConfig c;
  c.workers = 8;
  c.batch = 64;
  c.epochs = 0.1;
  c.eval_every_epochs = 0.1;
  c.seconds_per_sample = 1.25e-4;
  c.network.bandwidth_Bps = 100e9;
  c.network.alpha_s = 1e-6;
  const auto finish_s = [&](TrainMode mode, double slowdown, int backup) {
    TrainConfig k = c;
    k.mode = mode;
    k.backup_workers = backup;
    if (slowdown > 1) {
      k.slowdown.assign(8, 1.0);
      k.slowdown[3] = slowdown;
    }
    const TrainReport r = run_sgd_training(k, train_set(), test_set(), false, TrainBackend::flow);
    REQUIRE(!r.points.empty());
    return std::pair{r.points.back().time_s, r.dropped_gradients};
  };
  const double sync_even = finish_s(TrainMode::allreduce, 1, 0).first;
  const double sync_slow = finish_s(TrainMode::allreduce, 2, 0).first;
  const double async_even = finish_s(TrainMode::async_ps, 1, 0).first;
  const double async_slow = finish_s(TrainMode::async_ps, 2, 0).first;
  CHECK(sync_slow / sync_even > 1.8);    // every step waits for the slow worker
  CHECK(async_slow / async_even < 1.1);  // the others keep pushing: 7.5 workers' worth of gradients
  const auto [ps_slow, none_dropped] = finish_s(TrainMode::sync_ps, 3, 0);
  const auto [ps_backup, dropped] = finish_s(TrainMode::sync_ps, 3, 1);
  CHECK(none_dropped == 0);
  CHECK(dropped > 0);
  CHECK(ps_backup < 0.6 * ps_slow);  // the server no longer waits for the 3x worker
}

TEST_CASE("per-step jitter in training: reproducible from the seed, and it slows synchronous steps") {
  TrainConfig c;
  c.workers = 8;
  c.batch = 64;
  c.epochs = 0.1;
  c.eval_every_epochs = 0.1;
  c.seconds_per_sample = 1.25e-4;
  c.network.bandwidth_Bps = 100e9;
  const TrainReport plain = run_sgd_training(c, train_set(), test_set(), false, TrainBackend::flow);
  c.jitter.distribution = JitterDistribution::normal;
  c.jitter.sigma = 0.1;
  const TrainReport a = run_sgd_training(c, train_set(), test_set(), false, TrainBackend::flow);
  const TrainReport b = run_sgd_training(c, train_set(), test_set(), false, TrainBackend::flow);
  REQUIRE(!a.points.empty());
  CHECK(a.points.back().time_s == b.points.back().time_s);
  CHECK(a.final_parameters == b.final_parameters);
  // the slowest of 8 draws of 10%: about 1 + 0.1 x 1.42 per step
  CHECK(a.points.back().time_s > 1.08 * plain.points.back().time_s);
}
