#include "models/alpha_beta.hpp"

#include <algorithm>
#include <bit>

namespace dtsim {

double ring_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double p = ranks;
  const double n = static_cast<double>(bytes);
  return 2.0 * (p - 1.0) * (cost.alpha_s + n / (p * cost.bandwidth_Bps)) + (p - 1.0) * n / (p * cost.reduce_Bps);
}

namespace {

int ceil_log2(int ranks) {
  int levels = 0;
  while ((1LL << levels) < ranks)
    ++levels;
  return levels;
}

// log2 of the largest power of two <= ranks.
int floor_log2(int ranks) { return ceil_log2(ranks + 1) - 1; }

// MPICH's fold for non-powers of two: the extra ranks hand their buffer in (alpha + n beta, then n gamma to add it)
// and get the result back (alpha + n beta); nothing when ranks is a power of two.
double fold_seconds(int ranks, double n, const AlphaBetaGamma& cost) {
  if ((1LL << floor_log2(ranks)) == ranks) return 0.0;
  return 2.0 * (cost.alpha_s + n / cost.bandwidth_Bps) + n / cost.reduce_Bps;
}

}  // namespace

double binomial_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double n = static_cast<double>(bytes);
  return ceil_log2(ranks) * (2.0 * cost.alpha_s + 2.0 * n / cost.bandwidth_Bps + n / cost.reduce_Bps);
}

namespace {

// K segments of `segment` bytes each climbing and descending a tree of height H, one segment per step and link;
// `lanes` segments share a host's link in each step.
double pipeline_seconds(double k, double segment, double height, const AlphaBetaGamma& cost, double lanes = 1.0) {
  return (k + 2.0 * height - 1.0) * (cost.alpha_s + lanes * segment / cost.bandwidth_Bps) +
         (k + height - 1.0) * 2.0 * segment / cost.reduce_Bps;
}

double segments(std::uint64_t bytes, std::uint64_t segment_bytes) {
  return static_cast<double>((bytes + segment_bytes - 1) / std::max<std::uint64_t>(segment_bytes, 1));
}

double pipelined_tree_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, std::uint64_t segment_bytes,
                              double lanes) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double k = segments(bytes, segment_bytes);
  return pipeline_seconds(k, static_cast<double>(bytes) / k, floor_log2(ranks), cost, lanes);
}

double double_binary_tree_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                  std::uint64_t segment_bytes, double lanes) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const std::uint64_t half = (bytes + 1) / 2;
  const double k = segments(half, segment_bytes);
  return pipeline_seconds(k, static_cast<double>(half) / k, floor_log2(ranks - 1) + 1, cost, lanes);
}

}  // namespace

double pipelined_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                        std::uint64_t segment_bytes) {
  return pipelined_tree_seconds(ranks, bytes, cost, segment_bytes, 1.0);
}

double pipelined_tree_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                          std::uint64_t segment_bytes) {
  return pipelined_tree_seconds(ranks, bytes, cost, segment_bytes, 3.0);
}

double double_binary_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                            std::uint64_t segment_bytes) {
  return double_binary_tree_seconds(ranks, bytes, cost, segment_bytes, 1.0);
}

double chain_double_binary_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                                  std::uint64_t segment_bytes, int per_node) {
  if (per_node <= 1 || ranks % per_node != 0)
    return double_binary_tree_allreduce_seconds(ranks, bytes, cost, segment_bytes);
  if (ranks <= 1 || bytes == 0) return 0.0;
  const int nodes = ranks / per_node;
  const std::uint64_t half = (bytes + 1) / 2;
  const double k = segments(half, segment_bytes);
  const int height = per_node - 1 + (nodes > 1 ? floor_log2(nodes - 1) + 1 : 0);
  return pipeline_seconds(k, static_cast<double>(half) / k, height, cost, 1.0);
}

double double_binary_tree_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                              std::uint64_t segment_bytes) {
  return double_binary_tree_seconds(ranks, bytes, cost, segment_bytes, 4.0);
}

double recursive_doubling_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double n = static_cast<double>(bytes);
  const double exchange = cost.alpha_s + n / cost.bandwidth_Bps + n / cost.reduce_Bps;
  return floor_log2(ranks) * exchange + fold_seconds(ranks, n, cost);
}

double rabenseifner_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double n = static_cast<double>(bytes);
  const int levels = floor_log2(ranks);
  const double pof2 = static_cast<double>(1LL << levels);
  const double fraction = (pof2 - 1.0) / pof2;
  return 2.0 * levels * cost.alpha_s + 2.0 * fraction * n / cost.bandwidth_Bps + fraction * n / cost.reduce_Bps +
         fold_seconds(ranks, n, cost);
}

namespace {
// A step that moves its messages in `transfer_s` while its rank injects or takes in `messages` of them, one gap each
// after the first (StepGaps).
double with_gaps(double transfer_s, double messages, const AlphaBetaGamma& cost) {
  return std::max(transfer_s, (messages - 1.0) * cost.gap_s);
}
}  // namespace

double direct_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double chunk = static_cast<double>(bytes) / ranks;
  return 2.0 * with_gaps(cost.alpha_s + chunk / cost.bandwidth_Bps, ranks - 1.0, cost) +
         (ranks - 1.0) * chunk / cost.reduce_Bps;
}

double direct_allreduce_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double chunk = static_cast<double>(bytes) / ranks;
  return 2.0 * with_gaps(cost.alpha_s + (ranks - 1.0) * chunk / cost.bandwidth_Bps, ranks - 1.0, cost) +
         (ranks - 1.0) * chunk / cost.reduce_Bps;
}

double parameter_server_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, std::uint32_t servers,
                                bool colocated) {
  if (bytes == 0 || (colocated && ranks <= 1)) return 0.0;
  const double shard = static_cast<double>(bytes) / servers;
  const double workers = colocated ? ranks - 1.0 : ranks;
  // a server takes in (and sends) one message per worker, a worker one per server
  const double messages = std::max(workers, static_cast<double>(servers));
  return 2.0 * with_gaps(cost.alpha_s + shard / cost.bandwidth_Bps, messages, cost) + workers * shard / cost.reduce_Bps;
}

double parameter_server_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                            std::uint32_t servers, bool colocated) {
  if (bytes == 0 || (colocated && ranks <= 1)) return 0.0;
  const double shard = static_cast<double>(bytes) / servers;
  const double workers = colocated ? ranks - 1.0 : ranks;
  // a server link carries W shards, a worker link S of them (co-located: W >= S - 1 always)
  const double busiest = colocated ? workers : std::max(workers, static_cast<double>(servers));
  const double messages = std::max(workers, static_cast<double>(servers));
  return 2.0 * with_gaps(cost.alpha_s + busiest * shard / cost.bandwidth_Bps, messages, cost) +
         workers * shard / cost.reduce_Bps;
}

double bus_factor(std::string_view collective, int ranks) {
  if (ranks <= 1) return 0.0;
  if (collective == "allreduce") return allreduce_bus_factor(ranks);
  if (collective == "reduce-scatter" || collective == "allgather" || collective == "gather" ||
      collective == "scatter" || collective == "all-to-all") {
    return (ranks - 1.0) / ranks;
  }
  return 1.0;
}

double ring_reduce_scatter_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double block = static_cast<double>(bytes) / ranks;
  return (ranks - 1.0) * (cost.alpha_s + block / cost.bandwidth_Bps + block / cost.reduce_Bps);
}

double ring_allgather_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double block = static_cast<double>(bytes) / ranks;
  return (ranks - 1.0) * (cost.alpha_s + block / cost.bandwidth_Bps);
}

double bruck_allgather_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double steps = std::bit_width(static_cast<unsigned>(ranks - 1));  // ceil(log2 P)
  return steps * cost.alpha_s + (ranks - 1.0) / ranks * static_cast<double>(bytes) / cost.bandwidth_Bps;
}

double bruck_reduce_scatter_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  return bruck_allgather_seconds(ranks, bytes, cost) +
         (ranks - 1.0) / ranks * static_cast<double>(bytes) / cost.reduce_Bps;
}

double binomial_reduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double n = static_cast<double>(bytes);
  return ceil_log2(ranks) * (cost.alpha_s + n / cost.bandwidth_Bps + n / cost.reduce_Bps);
}

double binomial_broadcast_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double n = static_cast<double>(bytes);
  return ceil_log2(ranks) * (cost.alpha_s + n / cost.bandwidth_Bps);
}

double direct_gather_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double block = static_cast<double>(bytes) / ranks;
  return cost.alpha_s + block / cost.bandwidth_Bps;
}

double direct_alltoall_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double block = static_cast<double>(bytes) / ranks;
  return cost.alpha_s + block / ranks / cost.bandwidth_Bps;
}

double allreduce_bus_factor(int ranks) { return ranks <= 1 ? 0.0 : 2.0 * (ranks - 1.0) / ranks; }

}  // namespace dtsim
