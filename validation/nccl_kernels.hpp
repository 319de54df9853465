// The device side of dtsim-nccl-run, in plain C++17 for nvcc: summing a received span into the buffer.
#pragma once

#include <cstddef>

namespace dtsim::nccl {

// dst[i] += src[i] for i < count, on `stream` (a cudaStream_t).
void add_async(float* dst, const float* src, std::size_t count, void* stream);

}  // namespace dtsim::nccl
