// The MLP training step on a CUDA GPU (cuBLAS GEMMs and small kernels), the same arithmetic as Mlp on Eigen.
// Built only when CMake finds nvcc (option DTSIM_CUDA=AUTO|ON|OFF); DTSIM_HAVE_CUDA says whether it was.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "models/mlp.hpp"

namespace dtsim {

// Whether a CUDA device can be used; otherwise `why` says what is missing.
bool cuda_device_available(std::string& why);

class CudaMlp {
public:
  // Device buffers for `model`'s shape and batches of up to `max_batch` samples. Throws std::runtime_error when CUDA
  // fails (no device, out of memory).
  CudaMlp(const Mlp& model, int max_batch);
  ~CudaMlp();
  CudaMlp(const CudaMlp&) = delete;
  CudaMlp& operator=(const CudaMlp&) = delete;

  // As Mlp::accumulate_gradient, with `model`'s current parameters: adds the batch's gradient sum to `gradient` and
  // returns the summed loss.
  double accumulate_gradient(const Mlp& model, const float* inputs, const std::uint8_t* labels, int batch,
                             std::span<float> gradient);

private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace dtsim
