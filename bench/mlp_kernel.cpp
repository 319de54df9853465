// Benchmark (not a test): the MLP kernel's samples per second and achieved FLOP/s at several batch sizes, side by side
// with Eigen GEMMs of exactly the shapes the step multiplies (forward, weight gradient, input gradient), in one run.
// usage: build/bench/mlp_kernel [BATCH...]   (default 32 128 512); prints a Markdown table.
#include <Eigen/Dense>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "calibrate/microbench.hpp"
#include "models/mlp.hpp"

int main(int argc, char** argv) {
  std::vector<int> batches;
  for (int i = 1; i < argc; ++i)
    batches.push_back(std::atoi(argv[i]));
  if (batches.empty()) batches = {32, 128, 512};
  const std::vector<int> sizes{784, 95, 10};
  const dtsim::Mlp mlp(sizes, 1);
  std::printf("| batch | step (us) | samples/s | kernel GFLOP/s | GEMM-only GFLOP/s | kernel / GEMM |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (int batch : batches) {
    const double step = dtsim::measure_kernel_steps({batch}, 1.0).front().y;  // the calibration's own measurement
    // the same GEMMs alone: per layer z = W x, dW += d x^T, and (above the first layer) dx = W^T d
    std::vector<Eigen::MatrixXf> weights, x, z, d, dw, dx;
    for (std::size_t l = 1; l < sizes.size(); ++l) {
      weights.push_back(Eigen::MatrixXf::Random(sizes[l], sizes[l - 1]));
      x.push_back(Eigen::MatrixXf::Random(sizes[l - 1], batch));
      z.push_back(Eigen::MatrixXf(sizes[l], batch));
      d.push_back(Eigen::MatrixXf::Random(sizes[l], batch));
      dw.push_back(Eigen::MatrixXf::Zero(sizes[l], sizes[l - 1]));
      dx.push_back(Eigen::MatrixXf(sizes[l - 1], batch));
    }
    const double gemm = dtsim::best_seconds(
        [&] {
          for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
            z[l].noalias() = weights[l] * x[l];
            dw[l].noalias() += d[l] * x[l].transpose();
            if (l > 0) dx[l].noalias() = weights[l].transpose() * d[l];
          }
        },
        1.0);
    double gemm_flops = 0;
    for (std::size_t l = 1; l < sizes.size(); ++l) {
      gemm_flops += 2.0 * sizes[l] * sizes[l - 1] * batch * (l > 1 ? 3 : 2);
    }
    const double kernel_flops = mlp.flops_per_sample() * batch;
    std::printf("| %d | %.1f | %.0f | %.2f | %.2f | %.2f |\n", batch, step * 1e6, batch / step,
                kernel_flops / step / 1e9, gemm_flops / gemm / 1e9, (gemm_flops / step) / (gemm_flops / gemm));
  }
  return 0;
}
