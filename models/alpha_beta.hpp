// The alpha-beta-gamma cost model (Hockney; Thakur, Rabenseifner and Gropp 2005): sending m bytes between two hosts
// takes alpha + m / bandwidth, reducing m bytes takes m / reduce rate; with LogGP's per-message gap g (Alexandrov et
// al. 1995) on top: a rank's network interface injects one message every g and takes one in every g, so a step that
// sends n messages and receives m keeps its rank busy for at least max(n - 1, m - 1) g, alongside its transfers and
// computes (with gaps that differ by route: the sum of the sends' gaps but the largest, and likewise for the
// receives). alpha is the time of a lone message, its per-message overheads at both ends included (what a ping-pong
// measures); g is what each further message of a step adds (what a message-rate test measures). The messages
// themselves move as they would without it. Every executor applies it this way, as a timer of the step
// (step_gap_seconds below).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace dtsim {

struct AlphaBetaGamma {
  double alpha_s = 1e-6;            // one-way latency between two hosts
  double bandwidth_Bps = 10e9 / 8;  // each host's link bandwidth, bytes per second
  double reduce_Bps = 10e9;         // local reduction throughput, bytes per second
  double gap_s = 0.0;               // per-message gap g (LogGP): see above

  double transfer_seconds(std::uint64_t bytes) const { return alpha_s + static_cast<double>(bytes) / bandwidth_Bps; }
  double reduce_seconds(std::uint64_t bytes) const { return static_cast<double>(bytes) / reduce_Bps; }
};

// The per-message gaps of one step on one rank: add() each send's and each receive's gap (its route's), then
// seconds() is how long the step keeps the rank busy: the larger of the two sides' sums, each without its largest.
class StepGaps {
public:
  void add_send(double gap_s) { send_.add(gap_s); }
  void add_recv(double gap_s) { recv_.add(gap_s); }
  double seconds() const { return std::max(send_.beyond_largest(), recv_.beyond_largest()); }

private:
  struct Side {
    double sum = 0;
    double largest = 0;
    void add(double gap_s) {
      sum += gap_s;
      largest = std::max(largest, gap_s);
    }
    double beyond_largest() const { return sum - largest; }
  };
  Side send_;
  Side recv_;
};

// Ring allreduce closed form: 2(P-1)(alpha + n/(P B)) + (P-1) n/(P R) (Patarasuk and Yuan 2009; Thakur et al. 2005).
// Exact when P divides n; otherwise each step is bounded by its largest chunk and this is a lower bound.
double ring_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);

// Binomial-tree reduce then broadcast: ceil(log2 P) (2 alpha + 2 n beta + n gamma) (Thakur et al. 2005, 4.1/4.4).
double binomial_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);

// Recursive doubling with MPICH's fold for non-powers of two: log2(p') (alpha + n beta + n gamma), plus
// 2 (alpha + n beta) + n gamma when P != p' (Thakur et al. 2005, 4.5).
double recursive_doubling_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);

// Rabenseifner: 2 log2(p') alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma, plus 2 (alpha + n beta) + n gamma when
// P != p' (Thakur et al. 2005, 4.5). Exact when p' divides n.
double rabenseifner_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);

// Pipelined binary-tree allreduce over a heap-shaped tree of height H = floor(log2 P), K = ceil(n / segment) segments
// of s = n/K bytes: (K + 2H - 1)(alpha + s beta) + (K + H - 1) 2 s gamma without contention. Exact when reductions
// are free; with them it charges every step two segments' reduction, an upper bound that is exact for complete trees
// (P = 2^k - 1) and at most (K + H - 1) s gamma high otherwise.
double pipelined_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                        std::uint64_t segment_bytes);
// Double binary tree: each of two in-order trees of height H = floor(log2(P-1)) + 1 pipelines n/2 bytes in
// K = ceil(n/2 / segment) segments; the pipelined-tree formula with those K, s and H.
double double_binary_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                            std::uint64_t segment_bytes);

// The same two trees where each host has one link: an inner node of the single tree carries three segments each way
// per step (two children and its parent), a rank of the double tree four (inner in one tree, leaf in the other), so
// every transfer gets at least a third (a quarter) of the link: (K + 2H - 1)(alpha + c s beta) + (K + H - 1) 2 s gamma,
// an upper bound on a max-min shared star.
double pipelined_tree_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                          std::uint64_t segment_bytes);
// chain-dbtree: dbtree's pipeline with the height of a chain of `per_node` ranks under the nodes' in-order tree
// (dbtree's own closed form for one rank a node).
double chain_double_binary_tree_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                                  std::uint64_t segment_bytes, int per_node);
double double_binary_tree_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                              std::uint64_t segment_bytes);

// The closed forms charge per-message gaps where a step moves several messages: direct and the parameter server
// (each phase max(its transfer, (messages - 1) g)); the others move one message per rank and step, except the
// pipelined trees' inner nodes and hierarchical's inner algorithm (documented as not covered: g = 0 there).
// Direct allreduce without contention: 2 max(alpha + n/P beta, (P-2) g) + (P-1) n/P gamma.
double direct_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
// Direct allreduce where each host's single link carries its P-1 concurrent messages (max-min shared):
// 2 (alpha + (P-1) n/P beta) + (P-1) n/P gamma.
double direct_allreduce_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);

// Parameter server with `servers` shards, without contention: 2 (alpha + n/S beta) + W n/S gamma, where W = P on
// server hosts of their own and P-1 co-located.
double parameter_server_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, std::uint32_t servers,
                                bool colocated);
// The same where each host has one link (a star): every server link carries W shards each way and every worker link
// S of them, 2 (alpha + max(W, S) n/(S B)) + W n/S gamma (co-located servers: W = P-1 >= S-1, so W).
double parameter_server_shared_link_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                            std::uint32_t servers, bool colocated);

// Bus bandwidth as nccl-tests defines it for allreduce: algbw * 2(P-1)/P.
double allreduce_bus_factor(int ranks);
// The nccl-tests bus factor of a collective by name: allreduce 2(P-1)/P; reduce-scatter, allgather, gather, scatter
// and all-to-all (P-1)/P; broadcast and reduce 1.
double bus_factor(std::string_view collective, int ranks);

// The other collectives' algorithms, without contention (the registry gives each algorithm its closed form; the
// hierarchical allreduce's, which composes another's, is in algorithms/hierarchical.hpp):
// ring reduce-scatter (P-1)(alpha + n/P beta + n/P gamma); ring allgather (P-1)(alpha + n/P beta);
double ring_reduce_scatter_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
double ring_allgather_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
// Bruck's allgather ceil(log2 P) alpha + (P-1)/P n beta; its transpose, a reduce-scatter, adds (P-1)/P n gamma;
double bruck_allgather_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
double bruck_reduce_scatter_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
// binomial reduce ceil(log2 P)(alpha + n beta + n gamma); binomial broadcast ceil(log2 P)(alpha + n beta);
double binomial_reduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
double binomial_broadcast_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
// direct gather and scatter alpha + n/P beta; direct all-to-all alpha + n/P^2 beta (these share links in practice).
double direct_gather_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);
double direct_alltoall_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost);

}  // namespace dtsim
