// The real SGD kernel and the Fashion-MNIST reader.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "models/mlp.hpp"
#include "scenarios/idx_reader.hpp"

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
  CHECK_THROWS_WITH(read_idx_dataset((dir / "garbage.gz").string(), labels, "p"),
                    Catch::EndsWith("garbage.gz: not an IDX file of 3-dimensional unsigned bytes"));
  // a gzip file cut in the middle
  {
    std::ifstream in(std::string(fashion_mnist_directory) + "/t10k-images-idx3-ubyte.gz", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir / "cut.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  CHECK_THROWS_AS(read_idx_dataset((dir / "cut.gz").string(), labels, "p"), DataError);
  CHECK_THROWS_WITH(read_idx_dataset((dir / "cut.gz").string(), labels, "p"), Catch::Contains("cut.gz: "));
  std::filesystem::remove_all(dir);
}
