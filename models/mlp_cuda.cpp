#include "models/mlp_cuda.hpp"

#include <stdexcept>

#include "models/mlp_cuda_kernels.hpp"

namespace dtsim {

struct CudaMlp::Buffers {
  cuda::DeviceMlpPtr device;
};

bool cuda_device_available(std::string& why) { return cuda::device_available(why); }

CudaMlp::CudaMlp(const Mlp& model, int max_batch)
    : buffers_(std::make_unique<Buffers>(Buffers{cuda::create(model.sizes(), max_batch)})) {}

CudaMlp::~CudaMlp() = default;

double CudaMlp::accumulate_gradient(const Mlp& model, const float* inputs, const std::uint8_t* labels, int batch,
                                    std::span<float> gradient) {
  if (gradient.size() != model.parameter_count()) throw std::invalid_argument("cuda mlp: gradient of the wrong size");
  return cuda::accumulate_gradient(*buffers_->device, model.parameters().data(), model.parameter_count(), inputs,
                                   labels, batch, gradient.data());
}

}  // namespace dtsim
