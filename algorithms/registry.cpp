#include "algorithms/registry.hpp"

#include <array>
#include <stdexcept>

#include "algorithms/binomial_tree.hpp"
#include "algorithms/direct.hpp"
#include "algorithms/hierarchical.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/pipelined_tree.hpp"
#include "algorithms/rabenseifner.hpp"
#include "algorithms/recursive_doubling.hpp"
#include "algorithms/ring.hpp"

namespace dtsim {
namespace {

const std::array<AlgorithmInfo, 16> registry{{
    {"ring", Collective::allreduce, "ring reduce-scatter then ring allgather (bandwidth-optimal)", &ring_allreduce},
    {"tree", Collective::allreduce, "binomial-tree reduce to rank 0, then binomial broadcast",
     &binomial_tree_allreduce},
    {"pipelined-tree", Collective::allreduce,
     "binary tree, reduce and broadcast pipelined in segments of --segment-size", &pipelined_tree_allreduce},
    {"dbtree", Collective::allreduce, "NCCL-style double binary tree, each tree pipelining half the buffer",
     &double_binary_tree_allreduce},
    {"butterfly", Collective::allreduce, "recursive doubling, non-powers of two folded in as MPICH does",
     &recursive_doubling_allreduce},
    {"rabenseifner", Collective::allreduce,
     "recursive-halving reduce-scatter, then recursive-doubling allgather (non-powers of two folded in)",
     &rabenseifner_allreduce},
    {"ps", Collective::allreduce, "synchronous parameter server: push shards, servers reduce, pull (--servers)",
     &parameter_server_allreduce},
    {"direct", Collective::allreduce, "reduce-scatter and allgather by direct sends to every rank", &direct_allreduce},
    {"hierarchical", Collective::allreduce,
     "reduce-scatter inside each node, --inter allreduce across nodes, allgather inside (--ranks-per-node)",
     &hierarchical_allreduce},
    {"ring", Collective::reduce_scatter, "ring reduce-scatter, rank r ends with block r", &ring_reduce_scatter},
    {"ring", Collective::allgather, "ring allgather of the ranks' blocks", &ring_allgather},
    {"tree", Collective::broadcast, "binomial broadcast from --root", &binomial_broadcast},
    {"tree", Collective::reduce, "binomial reduce to --root", &binomial_reduce},
    {"direct", Collective::gather, "every rank sends its block straight to --root", &direct_gather},
    {"direct", Collective::scatter, "--root sends every rank its block directly", &direct_scatter},
    {"direct", Collective::alltoall, "every rank sends each block straight to its destination", &direct_alltoall},
}};

}  // namespace

std::span<const AlgorithmInfo> algorithms() { return registry; }

std::string algorithm_names(Collective collective) {
  std::string names;
  for (const auto& info : registry) {
    if (info.collective != collective) continue;
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

const AlgorithmInfo& find_algorithm(std::string_view name, Collective collective) {
  for (const auto& info : registry) {
    if (info.name == name && info.collective == collective) return info;
  }
  throw std::invalid_argument("unknown " + std::string(to_string(collective)) + " algorithm '" + std::string(name) +
                              "' (accepted: " + algorithm_names(collective) + ")");
}

const AlgorithmInfo& find_qualified_algorithm(std::string_view name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return find_algorithm(name);
  return find_algorithm(name.substr(slash + 1), parse_collective(name.substr(0, slash)));
}

Collective parse_collective(std::string_view name) {
  for (Collective c : {Collective::allreduce, Collective::reduce_scatter, Collective::allgather, Collective::broadcast,
                       Collective::reduce, Collective::gather, Collective::scatter, Collective::alltoall}) {
    if (name == to_string(c)) return c;
  }
  throw std::invalid_argument(
      "expected allreduce, reduce-scatter, allgather, broadcast, reduce, gather, scatter or "
      "all-to-all, got '" +
      std::string(name) + "'");
}

}  // namespace dtsim
