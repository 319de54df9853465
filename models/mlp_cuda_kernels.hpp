// The CUDA side of the MLP step, in C++17 with plain pointers so that nvcc compiles it on its own
// (models/mlp_cuda.cpp wraps it for the rest of dtsim).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dtsim::cuda {

struct DeviceMlp;
struct DeviceMlpDeleter {
  void operator()(DeviceMlp* mlp) const;
};
using DeviceMlpPtr = std::unique_ptr<DeviceMlp, DeviceMlpDeleter>;

bool device_available(std::string& why);
// Device buffers for layer sizes `sizes` and batches of up to max_batch; throws std::runtime_error on CUDA errors.
DeviceMlpPtr create(const std::vector<int>& sizes, int max_batch);
// Adds the batch's gradient sum to gradient[0, parameter_count) and returns the summed loss.
double accumulate_gradient(DeviceMlp& mlp, const float* parameters, std::size_t parameter_count, const float* inputs,
                           const std::uint8_t* labels, int batch, float* gradient);

}  // namespace dtsim::cuda
