#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Pipelined binary-tree allreduce in segments of options.segment_bytes (heap-shaped tree rooted at rank 0).
Schedule pipelined_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// NCCL-style double binary tree: two complementary in-order trees, each pipelining half of the buffer.
Schedule double_binary_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
