// dtsim-nccl-run: the same Schedules over NCCL point-to-point on the GPUs of one machine (one thread and one NCCL
// communicator per GPU; each step is an NCCL group of its sends and receives, then the received spans are reduced or
// copied on the GPU), or ncclAllReduce as the vendor baseline, checked against the exact expected sum. It prints the
// same lines as the emulated-cluster run, so that `dtsim validate --measured` predicts them alike.
// usage: dtsim-nccl-run GPUS REPETITIONS ALGORITHMS SIZES...   (ALGORITHMS: comma-separated, "nccl" the baseline)
// output: "pingpong BYTES SECONDS" (GPU 0 <-> GPU 1), then "case ALGORITHM BYTES MEDIAN_S MIN_S ok|WRONG"
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/collectives.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "validation/nccl_kernels.hpp"
#include "validation/payload.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(ncclResult_t e, const char* what) {
  if (e != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(e));
}

struct Gpu {
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* buffer = nullptr;
  float* scratch = nullptr;
  float* result = nullptr;
};

// Enqueues one rank's steps on its stream.
void enqueue(const dtsim::Schedule& s, Gpu& g) {
  const auto ops = s.rank_ops(g.rank);
  std::size_t i = 0;
  while (i < ops.size()) {
    std::size_t end = i;
    do {
      ++end;
    } while (end < ops.size() && !ops[end].starts_step());
    std::size_t at = 0;
    check(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t k = i; k < end; ++k) {
      const dtsim::Chunk c = s.span_extent(ops[k].span());
      const std::size_t count = c.size_bytes / 4;
      if (ops[k].kind() == dtsim::OpKind::send) {
        check(ncclSend(g.buffer + c.offset_bytes / 4, count, ncclFloat, ops[k].peer(), g.comm, g.stream), "ncclSend");
      } else if (ops[k].is_recv()) {
        check(ncclRecv(g.scratch + at, count, ncclFloat, ops[k].peer(), g.comm, g.stream), "ncclRecv");
        at += count;
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    at = 0;
    for (std::size_t k = i; k < end; ++k) {
      if (!ops[k].is_recv()) continue;
      const dtsim::Chunk c = s.span_extent(ops[k].span());
      const std::size_t count = c.size_bytes / 4;
      if (ops[k].kind() == dtsim::OpKind::recv_copy) {
        check(cudaMemcpyAsync(g.buffer + c.offset_bytes / 4, g.scratch + at, count * 4, cudaMemcpyDeviceToDevice,
                              g.stream),
              "cudaMemcpyAsync");
      } else {
        dtsim::nccl::add_async(g.buffer + c.offset_bytes / 4, g.scratch + at, count, g.stream);
      }
      at += count;
    }
    i = end;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: dtsim-nccl-run GPUS REPETITIONS ALGORITHMS SIZES...\n");
    return 2;
  }
  const int gpus = std::atoi(argv[1]);
  const int repetitions = std::max(1, std::atoi(argv[2]));
  std::vector<std::string> algorithms;
  std::stringstream list(argv[3]);
  for (std::string a; std::getline(list, a, ',');)
    algorithms.push_back(a);
  std::vector<std::uint64_t> sizes;
  for (int i = 4; i < argc; ++i)
    sizes.push_back(std::strtoull(argv[i], nullptr, 10) / 4 * 4);
  int available = 0;
  if (cudaGetDeviceCount(&available) != cudaSuccess || available < gpus || gpus < 2) {
    std::fprintf(stderr, "dtsim-nccl-run: needs %d GPUs (at least 2), found %d\n", gpus, available);
    return 2;
  }
  try {
    ncclUniqueId id;
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    std::vector<Gpu> g(static_cast<std::size_t>(gpus));
    std::barrier sync(gpus);
    auto each = [&](auto&& body) {
      std::vector<std::thread> threads;
      for (int r = 0; r < gpus; ++r) {
        threads.emplace_back([&, r] {
          check(cudaSetDevice(r), "cudaSetDevice");
          body(g[static_cast<std::size_t>(r)]);
        });
      }
      for (std::thread& t : threads)
        t.join();
    };
    each([&](Gpu& gpu) {
      gpu.rank = static_cast<int>(&gpu - g.data());
      check(ncclCommInitRank(&gpu.comm, gpus, id, gpu.rank), "ncclCommInitRank");
      check(cudaStreamCreate(&gpu.stream), "cudaStreamCreate");
      check(cudaMalloc(&gpu.buffer, largest), "cudaMalloc");
      check(cudaMalloc(&gpu.scratch, largest * static_cast<std::uint64_t>(gpus)), "cudaMalloc");
      check(cudaMalloc(&gpu.result, largest), "cudaMalloc");
    });
    // ping-pong between GPU 0 and GPU 1 for alpha and beta
    for (std::uint64_t bytes :
         {std::uint64_t{4}, std::uint64_t{64}, std::uint64_t{256}, std::uint64_t{1024}, std::uint64_t{16384},
          std::uint64_t{262144}, std::uint64_t{1} << 20, std::uint64_t{4} << 20, std::uint64_t{16} << 20}) {
      if (bytes > largest) break;
      double best = 1e30;
      for (int rep = 0; rep < repetitions + 1; ++rep) {
        std::vector<double> elapsed(static_cast<std::size_t>(gpus), 0.0);
        each([&](Gpu& gpu) {
          sync.arrive_and_wait();
          const auto t0 = std::chrono::steady_clock::now();
          const std::size_t count = bytes / 4;
          if (gpu.rank <= 1) {
            const int peer = 1 - gpu.rank;
            for (int leg = 0; leg < 2; ++leg) {
              const bool sends = (leg == 0) == (gpu.rank == 0);
              check(sends ? ncclSend(gpu.buffer, count, ncclFloat, peer, gpu.comm, gpu.stream)
                          : ncclRecv(gpu.buffer, count, ncclFloat, peer, gpu.comm, gpu.stream),
                    "ping-pong");
              check(cudaStreamSynchronize(gpu.stream), "sync");
            }
          }
          elapsed[static_cast<std::size_t>(gpu.rank)] =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 2;
        });
        if (rep > 0) best = std::min(best, elapsed[0]);
      }
      std::printf("pingpong %llu %.9e\n", static_cast<unsigned long long>(bytes), best);
    }
    for (const std::string& algorithm : algorithms) {
      for (std::uint64_t bytes : sizes) {
        dtsim::AlgorithmOptions options;
        options.element_bytes = 4;
        options.set(dtsim::ps_placement_option.name, "colocated");
        const bool vendor = algorithm == "nccl";
        const dtsim::Schedule s =  // every step written out: the GPUs run them one by one
            dtsim::expand(dtsim::find_algorithm(vendor ? "ring" : algorithm).build(gpus, bytes, options));
        std::vector<double> times;
        std::atomic<bool> ok{true};
        for (int rep = 0; rep < repetitions + 1; ++rep) {
          std::vector<double> elapsed(static_cast<std::size_t>(gpus), 0.0);
          each([&](Gpu& gpu) {
            std::vector<float> host(bytes / 4);
            for (std::uint32_t c = 0; c < s.chunks.size(); ++c) {
              const int owner = dtsim::initial_owner(s, gpu.rank, c);
              for (std::uint64_t e = s.chunks[c].offset_bytes / 4;
                   e < (s.chunks[c].offset_bytes + s.chunks[c].size_bytes) / 4; ++e) {
                host[e] = owner < 0 ? 0.0F : dtsim::validation_value(owner, e);
              }
            }
            check(cudaMemcpy(gpu.buffer, host.data(), bytes, cudaMemcpyHostToDevice), "fill");
            sync.arrive_and_wait();
            const auto t0 = std::chrono::steady_clock::now();
            if (vendor) {
              check(ncclAllReduce(gpu.buffer, gpu.result, bytes / 4, ncclFloat, ncclSum, gpu.comm, gpu.stream),
                    "ncclAllReduce");
            } else {
              enqueue(s, gpu);
            }
            check(cudaStreamSynchronize(gpu.stream), "sync");
            elapsed[static_cast<std::size_t>(gpu.rank)] =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            check(cudaMemcpy(host.data(), vendor ? gpu.result : gpu.buffer, bytes, cudaMemcpyDeviceToHost), "read");
            for (std::uint64_t e = 0; e < bytes / 4; ++e) {
              float want = 0;
              for (int k = 0; k < gpus; ++k)
                want += dtsim::validation_value(k, e);
              if (host[e] != want) ok.store(false);
            }
          });
          if (rep > 0) times.push_back(*std::max_element(elapsed.begin(), elapsed.end()));
        }
        std::sort(times.begin(), times.end());
        std::printf("case %s %llu %.9e %.9e %s\n", algorithm.c_str(), static_cast<unsigned long long>(bytes),
                    times[times.size() / 2], times.front(), ok.load() ? "ok" : "WRONG");
        std::fflush(stdout);
      }
    }
    each([&](Gpu& gpu) { ncclCommDestroy(gpu.comm); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtsim-nccl-run: %s\n", e.what());
    return 1;
  }
  return 0;
}
