#pragma once

#include <array>
#include <vector>

#include "algorithms/hierarchical.hpp"
#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"

namespace dtsim {

// The pipelined trees' one option (at most 1 TiB, the largest buffer).
inline constexpr OptionSpec segment_size_option{.name = "segment-size",
                                                .kind = OptionKind::bytes,
                                                .value_form = "BYTES",
                                                .default_text = "1MiB",
                                                .default_number = 1ULL << 20,
                                                .min = 1,
                                                .max = 1ULL << 40,
                                                .doc = "largest segment per pipeline step, at least 1 byte",
                                                .used_for = "move segments"};
inline constexpr std::array<OptionSpec, 1> pipelined_tree_options{segment_size_option};
inline constexpr std::array<OptionSpec, 2> chain_dbtree_options{segment_size_option, ranks_per_node_option};

// The K segments a pipeline cuts `bytes` into: ceil(bytes / --segment-size), at most `most` (one element a segment, or
// a share); throws OptionError naming --segment-size when it is 0 or K x `ops_per_segment` exceeds what
// a schedule holds.
std::uint32_t pipeline_segments(const char* name, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                                std::uint64_t most, std::uint64_t ops_per_segment);

// dbtree's two complementary in-order binary trees over p positions, as each position's parent (-1 at the root):
// every position that is a leaf of one is an inner node of the other.
std::array<std::vector<int>, 2> complementary_tree_parents(std::uint32_t p);

// Pipelined binary-tree allreduce in segments of --segment-size (heap-shaped tree rooted at rank 0).
Schedule pipelined_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// NCCL-style double binary tree: two complementary in-order trees, each pipelining half of the buffer.
Schedule double_binary_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// NCCL's tree: dbtree's two trees across nodes of --ranks-per-node ranks, a chain inside each node.
Schedule chain_dbtree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Their closed forms without contention (models/alpha_beta.hpp, with the options' segment size).
double pipelined_tree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                  const AlgorithmOptions& options);
double double_binary_tree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                      const AlgorithmOptions& options);
double chain_dbtree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                const AlgorithmOptions& options);

}  // namespace dtsim
