// `--algorithm auto`: the algorithm (and wire protocol) a collective library picks for one call, as its own selection
// logic would, so that dtsim times what users actually run rather than what they would have to name:
// - on a cluster whose file names a collective library (NCCL, RCCL), its tuner: for an allreduce, NCCL's estimate of
//   its ring (the ring's Schedule laid in channels, library_call) against its tree (estimate_tree_allreduce_seconds),
//   each in its cheapest protocol, the smaller winning (NCCL v2.30.7-1, src/graph/tuning.cc, ncclTopoGetAlgoTime);
//   NCCL's tree runs as `chain-dbtree` (dbtree's two trees across nodes, a chain through each node's ranks) where
//   --ranks-per-node lays ranks in nodes, as `dbtree` elsewhere; inside one node whose switch reduces
//   (node.intra.nvls), NVLS too: 25 us and twice the NVLink bus bandwidth times nvlsEfficiency x (channels-1)/channels
//   (estimate_nvls_allreduce_seconds), in Simple; across nodes whose switches reduce, laid in whole nodes, the NVLS
//   tree (estimate_nvls_tree_allreduce_seconds); across nodes of a fabric whose switches reduce (fabric.sharp), CollNet
//   as `sharp` (estimate_collnet_allreduce_seconds); the switch algorithms only where `in_switch` allows them; on a
//   cluster whose RCCL runs MSCCL (library.msccl), 8 GPUs of one pairwise-linked node up to 16 MiB take MSCCL's
//   all-pairs file instead (`direct`, LL below 512 KiB, Simple above; a rule, no candidates);
// - elsewhere (MPI on a star or a cluster without a library), MPICH's default selection (src/mpi/coll/allreduce,
//   MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE = 2048; Thakur, Rabenseifner and Gropp 2005, "Optimization of collective
//   communication operations in MPICH", section 4.4): recursive doubling (`butterfly`) up to 2 KiB or below one
//   element per rank of the largest power of two, Rabenseifner's reduce-scatter and allgather above;
// - reduce-scatter and allgather: on a library's cluster NCCL's tuner between its ring and, at one GPU a node, its
//   PAT (run as `bruck` under PAT's costs, estimate_pat_seconds); NCCL's NVLS and CollNet versions are not modelled;
//   elsewhere MPICH's thresholds on the whole buffer (MPIR_CVAR_REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE and
//   MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE = 512 KiB, MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE = 80 KiB off powers of two):
//   `bruck` below them (MPICH's recursive halving and doubling where P is a power of two: the same alpha-beta
//   cost), the ring above (MPICH runs a pairwise exchange there for reduce-scatter: not registered; the ring has its
//   bandwidth term);
// - a collective with one algorithm in the registry: that one.
// The choice is an estimate of the library's, not dtsim's fastest: `dtsim compare` shows where the two differ.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/registry.hpp"
#include "models/collective_library.hpp"
#include "sim/network.hpp"

namespace dtsim {

struct AlgorithmCandidate {
  const AlgorithmInfo* algorithm = nullptr;
  Protocol protocol = Protocol::none;
  double estimate_s = 0;  // the library's estimate (tuner); 0 where a rule chose
};

struct AlgorithmChoice {
  const AlgorithmInfo* algorithm = nullptr;
  Protocol protocol = Protocol::none;          // the tuner's protocol for it (none: no library, or let the caller tune)
  std::string rule;                            // how: "nccl tuner", "mpich thresholds", "only algorithm"
  std::vector<AlgorithmCandidate> candidates;  // what the tuner weighed (empty where a rule chose)
};

// The library's choice for `collective` on `ranks` positions of `network` with a buffer of `bytes` (`options` as the
// algorithms read them). Throws std::invalid_argument when the collective has no registered algorithm.
// `in_switch`: algorithms whose helpers run in a switch (nvls, sharp) may be chosen (not in tensor or pipeline
// layouts yet).
AlgorithmChoice choose_algorithm(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                                 const NetworkCost& network, bool in_switch = true);

// An allreduce as a scenario or flag names it: a registered name, or "auto" for choose_algorithm's choice on
// `network` for a buffer of `bytes` (its protocol: the one the tuner weighed it in; none: tune it, or no library).
// Throws std::invalid_argument naming the accepted algorithms for an unknown name.
struct ResolvedAllreduce {
  const AlgorithmInfo* algorithm = nullptr;
  Protocol protocol = Protocol::none;
};
inline constexpr std::string_view auto_algorithm = "auto";
ResolvedAllreduce resolve_allreduce(std::string_view name, int ranks, std::uint64_t bytes,
                                    const AlgorithmOptions& options, const NetworkCost& network);
// Checks a name resolve_allreduce accepts (a registered allreduce or "auto"); throws as find_algorithm does.
void check_allreduce_name(std::string_view name);

}  // namespace dtsim
