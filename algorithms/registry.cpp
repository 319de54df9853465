#include "algorithms/registry.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "algorithms/binomial_tree.hpp"
#include "algorithms/bruck.hpp"
#include "algorithms/direct.hpp"
#include "algorithms/hierarchical.hpp"
#include "algorithms/nvls.hpp"
#include "algorithms/nvls_tree.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/pipelined_tree.hpp"
#include "algorithms/rabenseifner.hpp"
#include "algorithms/recursive_doubling.hpp"
#include "algorithms/ring.hpp"
#include "algorithms/sharp.hpp"

namespace dtsim {
namespace {

// The built-in algorithms, one line each: name, collective, summary, builder, closed form, options, helper ranks.
constexpr std::array<AlgorithmInfo, 22> builtin{{
    {"ring", Collective::allreduce,
     "ring reduce-scatter then ring allgather (bandwidth-optimal); --channels rings at once", &ring_allreduce,
     &ring_allreduce_closed_form, ring_options},
    {"tree", Collective::allreduce, "binomial-tree reduce to rank 0, then binomial broadcast", &binomial_tree_allreduce,
     &without_options<binomial_tree_allreduce_seconds>},
    {"pipelined-tree", Collective::allreduce,
     "binary tree, reduce and broadcast pipelined in segments of --segment-size", &pipelined_tree_allreduce,
     &pipelined_tree_closed_form, pipelined_tree_options},
    {"dbtree", Collective::allreduce, "NCCL-style double binary tree, each tree pipelining half the buffer",
     &double_binary_tree_allreduce, &double_binary_tree_closed_form, pipelined_tree_options},
    {"chain-dbtree", Collective::allreduce,
     "NCCL's tree: dbtree across nodes, a chain through each node's ranks (--ranks-per-node)", &chain_dbtree_allreduce,
     &chain_dbtree_closed_form, chain_dbtree_options},
    {"butterfly", Collective::allreduce, "recursive doubling, non-powers of two folded in as MPICH does",
     &recursive_doubling_allreduce, &without_options<recursive_doubling_allreduce_seconds>},
    {"rabenseifner", Collective::allreduce,
     "recursive-halving reduce-scatter, then recursive-doubling allgather (non-powers of two folded in)",
     &rabenseifner_allreduce, &without_options<rabenseifner_allreduce_seconds>},
    {"ps", Collective::allreduce, "synchronous parameter server: push shards, servers reduce, pull (--servers)",
     &parameter_server_allreduce, &parameter_server_closed_form, parameter_server_options, true},
    {"direct",
     Collective::allreduce,
     "reduce-scatter and allgather by direct sends to every rank",
     &direct_allreduce,
     &without_options<direct_allreduce_seconds>,
     {},
     false,
     false,
     &direct_allreduce_pairs},
    {"hierarchical", Collective::allreduce,
     "reduce-scatter inside each node, --inter allreduce across nodes, allgather inside (--ranks-per-node)",
     &hierarchical_allreduce, &hierarchical_allreduce_seconds, hierarchical_options},
    {"nvls", Collective::allreduce,
     "NCCL's NVLS inside one node: the NVSwitch reduces and multicasts, in segments of --segment-size (clusters whose "
     "node.intra.nvls is true)",
     &nvls_allreduce, &nvls_closed_form, pipelined_tree_options, true, true},
    {"nvls-tree", Collective::allreduce,
     "NCCL's NVLS tree across nodes: each node's NVSwitch reduces and multicasts, dbtree's two trees between nodes, "
     "in segments of --segment-size (clusters whose node.intra.nvls is true)",
     &nvls_tree_allreduce, &nvls_tree_closed_form, nvls_tree_options, true, true},
    {"sharp", Collective::allreduce,
     "SHARP (NCCL's CollNet): the fabric's switches reduce up an aggregation tree and multicast down, in segments of "
     "--segment-size (clusters whose fabric.sharp is true)",
     &sharp_allreduce, &sharp_closed_form, sharp_options, true, true},
    {"ring", Collective::reduce_scatter, "ring reduce-scatter, rank r ends with block r", &ring_reduce_scatter,
     &without_options<ring_reduce_scatter_seconds>},
    {"ring", Collective::allgather, "ring allgather of the ranks' blocks", &ring_allgather,
     &without_options<ring_allgather_seconds>},
    {"bruck", Collective::reduce_scatter,
     "Bruck's allgather transposed: ceil(log2 P) steps of partial sums at distances P/2 .. 1", &bruck_reduce_scatter,
     &without_options<bruck_reduce_scatter_seconds>},
    {"bruck", Collective::allgather, "Bruck's allgather: ceil(log2 P) steps at distances 1, 2, 4, ...",
     &bruck_allgather, &without_options<bruck_allgather_seconds>},
    {"tree", Collective::broadcast, "binomial broadcast from --root", &binomial_broadcast,
     &without_options<binomial_broadcast_seconds>},
    {"tree", Collective::reduce, "binomial reduce to --root", &binomial_reduce,
     &without_options<binomial_reduce_seconds>},
    {"direct", Collective::gather, "every rank sends its block straight to --root", &direct_gather,
     &without_options<direct_gather_seconds>},
    {"direct", Collective::scatter, "--root sends every rank its block directly", &direct_scatter,
     &without_options<direct_gather_seconds>},
    {"direct",
     Collective::alltoall,
     "every rank sends each block straight to its destination",
     &direct_alltoall,
     &without_options<direct_alltoall_seconds>,
     {},
     false,
     false,
     &direct_alltoall_pairs},
}};

void add(std::deque<AlgorithmInfo>& registered, const AlgorithmInfo& info) {
  const std::string what = std::string(to_string(info.collective)) + " algorithm '" + std::string(info.name) + "'";
  if (info.name.empty() || info.make_schedule == nullptr) {
    throw std::invalid_argument(what + ": needs a name and a schedule builder");
  }
  for (const AlgorithmInfo& other : registered) {
    if (other.name == info.name && other.collective == info.collective) {
      throw std::invalid_argument(what + " is already registered");
    }
    for (const OptionSpec& spec : info.option_specs) {
      const OptionSpec* same_name = other.option(spec.name);
      if (same_name != nullptr && !(*same_name == spec)) {
        throw std::invalid_argument(what + ": its option '" + std::string(spec.name) + "' differs from " +
                                    std::string(other.name) + "'s option of that name (one flag, one meaning)");
      }
    }
  }
  registered.push_back(info);
}

std::deque<AlgorithmInfo>& table() {
  static std::deque<AlgorithmInfo> registered = [] {
    std::deque<AlgorithmInfo> all;
    for (const AlgorithmInfo& info : builtin)
      add(all, info);
    return all;
  }();
  return registered;
}

}  // namespace

Schedule AlgorithmInfo::build(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) const {
  for (const std::string& set : options.names()) {
    if (algorithms_declaring(set).empty()) {
      throw std::logic_error("algorithm option '" + set + "' is declared by no registered algorithm");
    }
  }
  return make_schedule(ranks, bytes, options);
}

std::optional<AllPairs> AlgorithmInfo::pairs(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) const {
  if (all_pairs == nullptr) return std::nullopt;
  try {
    return all_pairs(ranks, bytes, options);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

double AlgorithmInfo::closed_form_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                          const AlgorithmOptions& options) const {
  return closed_form != nullptr ? closed_form(ranks, bytes, cost, options) : -1.0;
}

const OptionSpec* AlgorithmInfo::option(std::string_view option_name) const {
  for (const OptionSpec& spec : option_specs) {
    if (spec.name == option_name) return &spec;
  }
  return nullptr;
}

bool AlgorithmInfo::nestable() const {
  return collective == Collective::allreduce && (!helper_ranks || switch_helpers) &&
         std::none_of(option_specs.begin(), option_specs.end(),
                      [](const OptionSpec& spec) { return spec.kind == OptionKind::allreduce; });
}

const std::deque<AlgorithmInfo>& algorithms() { return table(); }

std::string algorithm_names(Collective collective) {
  std::string names;
  for (const auto& info : table()) {
    if (info.collective != collective) continue;
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

const AlgorithmInfo& find_algorithm(std::string_view name, Collective collective) {
  for (const auto& info : table()) {
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

std::string nestable_allreduce_names() {
  std::string names;
  for (const auto& info : table()) {
    if (!info.nestable()) continue;
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

const AlgorithmInfo& find_nestable_allreduce(std::string_view name) {
  const AlgorithmInfo& info = find_algorithm(name);
  if (!info.nestable()) {
    throw std::invalid_argument("expected an allreduce without helper ranks of its own or nesting (" +
                                nestable_allreduce_names() + "), got '" + std::string(name) + "'");
  }
  return info;
}

std::vector<const OptionSpec*> declared_options() {
  std::vector<const OptionSpec*> out;
  for (const auto& info : table()) {
    for (const OptionSpec& spec : info.option_specs) {
      if (std::none_of(out.begin(), out.end(), [&spec](const OptionSpec* o) { return o->name == spec.name; })) {
        out.push_back(&spec);
      }
    }
  }
  return out;
}

std::vector<const AlgorithmInfo*> algorithms_declaring(std::string_view option_name) {
  std::vector<const AlgorithmInfo*> out;
  for (const auto& info : table()) {
    if (info.option(option_name) != nullptr) out.push_back(&info);
  }
  return out;
}

const AlgorithmInfo& register_algorithm(const AlgorithmInfo& info) {
  add(table(), info);
  return table().back();
}

void unregister_algorithm(std::string_view name, Collective collective) {
  std::deque<AlgorithmInfo>& registered = table();
  const auto it = std::find_if(registered.begin(), registered.end(), [&](const AlgorithmInfo& info) {
    return info.name == name && info.collective == collective;
  });
  if (it == registered.end()) {
    throw std::invalid_argument("no " + std::string(to_string(collective)) + " algorithm '" + std::string(name) +
                                "' is registered");
  }
  registered.erase(it);
}

}  // namespace dtsim
