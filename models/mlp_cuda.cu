#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#include "models/mlp_cuda_kernels.hpp"

namespace dtsim::cuda {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("cuda: ") + what + ": " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cublas: ") + what + " failed (status " + std::to_string(status) + ")");
  }
}

// z (rows x cols, column-major) += bias per row; a = relu(z) when `relu`.
__global__ void add_bias(float* z, float* a, const float* bias, int rows, int cols, bool relu) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const float v = z[i] + bias[i % rows];
  z[i] = v;
  if (relu) a[i] = v > 0.0f ? v : 0.0f;
}

// Per sample (column): softmax of z, its cross-entropy against the label, and delta = softmax - one-hot.
__global__ void softmax_cross_entropy(const float* z, const std::uint8_t* labels, float* delta, float* loss,
                                      int classes, int batch) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= batch) return;
  const float* column = z + static_cast<size_t>(j) * classes;
  float top = column[0];
  for (int c = 1; c < classes; ++c) top = fmaxf(top, column[c]);
  float sum = 0.0f;
  for (int c = 0; c < classes; ++c) sum += expf(column[c] - top);
  float* out = delta + static_cast<size_t>(j) * classes;
  for (int c = 0; c < classes; ++c) out[c] = expf(column[c] - top) / sum;
  const int label = labels[j];
  loss[j] = -logf(fmaxf(out[label], 1e-30f));
  out[label] -= 1.0f;
}

// bias_gradient[r] += sum over columns of delta[r, :]
__global__ void row_sums(const float* delta, float* bias_gradient, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j) sum += delta[r + static_cast<size_t>(j) * rows];
  bias_gradient[r] += sum;
}

// delta *= (z > 0)
__global__ void relu_mask(float* delta, const float* z, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count && z[i] <= 0.0f) delta[i] = 0.0f;
}

int blocks(int count) { return (count + 255) / 256; }

}  // namespace

bool device_available(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("no usable CUDA device (") + cudaGetErrorString(status) + ")";
    return false;
  }
  if (count == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

struct DeviceMlp {
  cublasHandle_t blas = nullptr;
  std::vector<int> sizes;
  int max_batch = 0;
  float* parameters = nullptr;
  float* gradient = nullptr;
  float* inputs = nullptr;
  std::uint8_t* labels = nullptr;
  float* loss = nullptr;
  std::vector<float*> z, a, delta;
  std::vector<std::size_t> weight_offset, bias_offset;
  std::size_t parameter_count = 0;

  ~DeviceMlp() {
    for (float* p : z) cudaFree(p);
    for (float* p : a) cudaFree(p);
    for (float* p : delta) cudaFree(p);
    cudaFree(parameters);
    cudaFree(gradient);
    cudaFree(inputs);
    cudaFree(labels);
    cudaFree(loss);
    if (blas != nullptr) cublasDestroy(blas);
  }
};

void DeviceMlpDeleter::operator()(DeviceMlp* mlp) const { delete mlp; }

DeviceMlpPtr create(const std::vector<int>& sizes, int max_batch) {
  DeviceMlpPtr owner(std::make_unique<DeviceMlp>().release());  // DeviceMlpDeleter frees it where it is complete
  DeviceMlp& b = *owner;
  b.sizes = sizes;
  b.max_batch = max_batch;
  std::size_t offset = 0;
  for (std::size_t l = 1; l < b.sizes.size(); ++l) {
    b.weight_offset.push_back(offset);
    offset += static_cast<std::size_t>(b.sizes[l]) * static_cast<std::size_t>(b.sizes[l - 1]);
    b.bias_offset.push_back(offset);
    offset += static_cast<std::size_t>(b.sizes[l]);
  }
  b.parameter_count = offset;
  check(cublasCreate(&b.blas), "cublasCreate");
  check(cudaMalloc(&b.parameters, b.parameter_count * sizeof(float)), "cudaMalloc parameters");
  check(cudaMalloc(&b.gradient, b.parameter_count * sizeof(float)), "cudaMalloc gradient");
  check(cudaMalloc(&b.inputs, static_cast<std::size_t>(max_batch) * b.sizes[0] * sizeof(float)), "cudaMalloc inputs");
  check(cudaMalloc(&b.labels, static_cast<std::size_t>(max_batch)), "cudaMalloc labels");
  check(cudaMalloc(&b.loss, static_cast<std::size_t>(max_batch) * sizeof(float)), "cudaMalloc loss");
  for (std::size_t l = 1; l < b.sizes.size(); ++l) {
    const std::size_t bytes = static_cast<std::size_t>(b.sizes[l]) * max_batch * sizeof(float);
    float* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc z");
    b.z.push_back(p);
    check(cudaMalloc(&p, bytes), "cudaMalloc a");
    b.a.push_back(p);
    check(cudaMalloc(&p, bytes), "cudaMalloc delta");
    b.delta.push_back(p);
  }
  return owner;
}

double accumulate_gradient(DeviceMlp& b, const float* parameters, std::size_t parameter_count, const float* inputs,
                           const std::uint8_t* labels, int batch, float* gradient) {
  if (batch > b.max_batch || parameter_count != b.parameter_count) {
    throw std::invalid_argument("cuda mlp: batch or gradient buffer of the wrong size");
  }
  const std::size_t layers = b.sizes.size() - 1;
  check(cudaMemcpy(b.parameters, parameters, b.parameter_count * sizeof(float),
                   cudaMemcpyHostToDevice),
        "copy parameters");
  check(cudaMemcpy(b.gradient, gradient, b.parameter_count * sizeof(float), cudaMemcpyHostToDevice),
        "copy gradient");
  check(cudaMemcpy(b.inputs, inputs, static_cast<std::size_t>(batch) * b.sizes[0] * sizeof(float),
                   cudaMemcpyHostToDevice),
        "copy inputs");
  check(cudaMemcpy(b.labels, labels, static_cast<std::size_t>(batch), cudaMemcpyHostToDevice), "copy labels");
  const float one = 1.0f;
  const float zero = 0.0f;
  for (std::size_t l = 0; l < layers; ++l) {
    const int out = b.sizes[l + 1];
    const int in = b.sizes[l];
    const float* x = l == 0 ? b.inputs : b.a[l - 1];
    // z = W x: W is out x in column-major, x in x batch
    check(cublasSgemm(b.blas, CUBLAS_OP_N, CUBLAS_OP_N, out, batch, in, &one, b.parameters + b.weight_offset[l], out,
                      x, in, &zero, b.z[l], out),
          "forward gemm");
    add_bias<<<blocks(out * batch), 256>>>(b.z[l], b.a[l], b.parameters + b.bias_offset[l], out, batch,
                                           l + 1 < layers);
  }
  softmax_cross_entropy<<<blocks(batch), 256>>>(b.z[layers - 1], b.labels, b.delta[layers - 1], b.loss,
                                                 b.sizes.back(), batch);
  for (std::size_t l = layers; l-- > 0;) {
    const int out = b.sizes[l + 1];
    const int in = b.sizes[l];
    const float* x = l == 0 ? b.inputs : b.a[l - 1];
    // dW += delta x^T
    check(cublasSgemm(b.blas, CUBLAS_OP_N, CUBLAS_OP_T, out, in, batch, &one, b.delta[l], out, x, in, &one,
                      b.gradient + b.weight_offset[l], out),
          "weight gradient gemm");
    row_sums<<<blocks(out), 256>>>(b.delta[l], b.gradient + b.bias_offset[l], out, batch);
    if (l > 0) {
      // delta_prev = W^T delta, masked by the ReLU
      check(cublasSgemm(b.blas, CUBLAS_OP_T, CUBLAS_OP_N, in, batch, out, &one, b.parameters + b.weight_offset[l],
                        out, b.delta[l], out, &zero, b.delta[l - 1], in),
            "input gradient gemm");
      relu_mask<<<blocks(in * batch), 256>>>(b.delta[l - 1], b.z[l - 1], in * batch);
    }
  }
  check(cudaGetLastError(), "kernel launch");
  check(cudaMemcpy(gradient, b.gradient, b.parameter_count * sizeof(float), cudaMemcpyDeviceToHost),
        "copy gradient back");
  std::vector<float> loss(static_cast<std::size_t>(batch));
  check(cudaMemcpy(loss.data(), b.loss, loss.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy loss");
  double total = 0;
  for (float v : loss) total += v;
  return total;
}

}  // namespace dtsim::cuda
