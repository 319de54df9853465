#include "sim/algorithm_choice.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

#include "algorithms/hierarchical.hpp"
#include "sim/library_cost.hpp"

namespace dtsim {
namespace {

constexpr const char* switch_not_in_layouts =
    "reduces in switches: it runs in data-parallel training steps on a cluster, not yet in tensor or pipeline "
    "parallel layouts";

// The cheapest allowed protocol for an estimate, and its seconds.
template <class Estimate>
AlgorithmCandidate cheapest(const AlgorithmInfo* algorithm, const CollectiveLibrary& library, Estimate estimate) {
  AlgorithmCandidate best{algorithm, Protocol::none, std::numeric_limits<double>::infinity()};
  for (const Protocol p : library_protocols) {
    if (!library.allows(p)) continue;
    const double s = estimate(p);
    if (s < best.estimate_s) best = {algorithm, p, s};
  }
  return best;
}

// RCCL's MSCCL all-pairs allreduce (cluster file library.msccl) where RCCL ships an algorithm file for it: 8 GPUs of
// one node, each linked to every other, out of place (tools/msccl-algorithms/allreduce-allpairs-8n-*-op.xml in
// ROCm/rccl): LL up to 512 KiB (2, 4 or 8 channels by size), Simple from 512 KiB to 16 MiB (8 channels). Every GPU
// sends each peer its eighth and adds up the eighths it receives, then sends each peer its sum: `direct`'s two steps.
// (The in-place files cover other ranges, e.g. LL from 80 KiB to 1 MiB; the out-of-place ones are used for all
// calls.) Returns false where no file applies.
bool msccl_allreduce(int ranks, std::uint64_t bytes, const NetworkCost& network, int nodes, AlgorithmChoice& choice) {
  constexpr int msccl_gpus = 8;
  constexpr std::uint64_t simple_from_bytes = 512 * 1024, largest_bytes = 16 * 1024 * 1024;
  const NodeSpec& node = network.topology->spec().node;
  if (!network.library.msccl || ranks != msccl_gpus || nodes != 1 || node.accelerators != msccl_gpus ||
      node.intra_kind != IntraKind::nvlink || bytes == 0 || bytes > largest_bytes) {
    return false;
  }
  const Protocol protocol = bytes < simple_from_bytes ? Protocol::ll : Protocol::simple;
  if (!network.library.allows(protocol)) return false;
  choice.algorithm = &find_algorithm("direct");
  choice.protocol = protocol;
  choice.rule = network.library.name + " msccl (all-pairs, 8 GPUs, up to 16 MiB)";
  return true;
}

// NCCL's tuner between its ring and its tree for an allreduce.
AlgorithmChoice library_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                                  const NetworkCost& network, bool in_switch) {
  AlgorithmChoice choice;
  choice.rule = network.library.name + " tuner";
  const std::string restriction = network.library.allreduce_restriction();
  if (!restriction.empty()) choice.rule += " over " + restriction;
  const AlgorithmInfo* ring = &find_algorithm("ring");
  // NCCL's tree: a chain in each node under a double binary tree across nodes, where the options lay ranks in nodes
  // (--ranks-per-node, set from the cluster); dbtree over every rank otherwise
  const std::uint64_t per_node = options.number(ranks_per_node_option);
  const bool chains = per_node > 1 && ranks % per_node == 0 &&
                      per_node == static_cast<std::uint64_t>(network.topology->spec().node.accelerators);
  const AlgorithmInfo* tree = &find_algorithm(chains ? "chain-dbtree" : "dbtree");
  const Schedule ring_schedule = ring->build(ranks, bytes, options);
  LibraryCall call = library_call(network, ring_schedule);
  if (msccl_allreduce(ranks, bytes, network, call.nodes, choice)) return choice;
  // the bandwidth of the call's channels together, as plan_library_call lays them (a NIC each across nodes)
  const int channels = library_channels(network, ring_schedule);
  if (call.hop == HopClass::net) call.bandwidth_Bps *= channels;
  const CollectiveLibrary& library = network.library;
  const auto ring_candidate = [&] {
    return cheapest(ring, library, [&](Protocol p) { return estimate_seconds(library, p, call); });
  };
  if (library.allows_allreduce(LibraryAlgorithm::ring)) choice.candidates.push_back(ring_candidate());
  if (ranks > 1 && library.allows_allreduce(LibraryAlgorithm::tree)) {
    TreeCall t;
    t.nodes = call.nodes;
    t.per_node = std::max(1, (ranks + call.nodes - 1) / call.nodes);
    t.channels = channels;
    t.bytes = static_cast<double>(bytes);
    t.bus_Bps = call.bandwidth_Bps;
    t.intra = network.topology->spec().node.intra_kind == IntraKind::pcie ? HopClass::pci : HopClass::nvlink;
    choice.candidates.push_back(cheapest(
        tree, network.library, [&](Protocol p) { return estimate_tree_allreduce_seconds(network.library, p, t); }));
  }
  // NVLS where the call stays in one node whose switch reduces (Simple only)
  if (in_switch && ranks > 1 && call.nodes == 1 && library.allows_allreduce(LibraryAlgorithm::nvls) &&
      network.topology->spec().node.nvls && nvls_efficiency(network.library.generation) > 0 &&
      network.library.allows(Protocol::simple)) {
    NvlsCall n;
    n.ranks = ranks;
    n.bytes = static_cast<double>(bytes);
    n.link_Bps = network.topology->spec().node.intra.bandwidth_Bps;
    choice.candidates.push_back(
        {&find_algorithm("nvls"), Protocol::simple, estimate_nvls_allreduce_seconds(network.library, n)});
  }
  // NVLS tree where the call spans nodes whose switches reduce, laid in whole nodes (Simple only)
  if (in_switch && chains && call.nodes > 1 && library.allows_allreduce(LibraryAlgorithm::nvls_tree) &&
      network.topology->spec().node.nvls && nvls_efficiency(network.library.generation) > 0 &&
      network.library.allows(Protocol::simple)) {
    const NodeSpec& node = network.topology->spec().node;
    NvlsTreeCall n;
    n.ranks = ranks;
    n.nodes = call.nodes;
    n.bytes = static_cast<double>(bytes);
    n.link_Bps = node.intra.bandwidth_Bps;
    n.nics_Bps = node.nic.bandwidth_Bps * node.nics;
    choice.candidates.push_back(
        {&find_algorithm("nvls-tree"), Protocol::simple, estimate_nvls_tree_allreduce_seconds(network.library, n)});
  }
  // CollNet (SHARP) where the call spans nodes on a fabric whose switches reduce (Simple only), as `sharp` in nodes of
  // --ranks-per-node: at one rank a node, or on NVSwitch nodes (NCCL disables CollNet Direct elsewhere); through the
  // nodes' switches where they reduce too (NVLS with CollNet)
  const Topology& topology = *network.topology;
  const NodeSpec& node = topology.spec().node;
  const std::uint64_t sharp_per_node = per_node > 0 && ranks % per_node == 0 ? per_node : 1;
  if (in_switch && ranks > 1 && call.nodes > 1 && library.allows_allreduce(LibraryAlgorithm::collnet) &&
      topology.spec().fabric.sharp && (sharp_per_node == 1 || node.intra_kind == IntraKind::nvswitch) &&
      network.library.allows(Protocol::simple)) {
    const AlgorithmInfo* sharp = &find_algorithm("sharp");
    if (sharp_per_node > 1 && node.nvls && nvls_efficiency(network.library.generation) > 0) {
      NvlsTreeCall n;
      n.ranks = ranks;
      n.nodes = call.nodes;
      n.bytes = static_cast<double>(bytes);
      n.link_Bps = node.intra.bandwidth_Bps;
      n.nics_Bps = node.nic.bandwidth_Bps * node.nics;
      choice.candidates.push_back(
          {sharp, Protocol::simple, estimate_nvls_collnet_allreduce_seconds(network.library, n)});
    } else {
      CollnetCall c;
      c.nodes = call.nodes;
      c.per_node = static_cast<int>(sharp_per_node);
      c.nics = node.nics;
      c.bytes = static_cast<double>(bytes);
      c.intra_Bps = node.nic.bandwidth_Bps * c.nics;
      choice.candidates.push_back({sharp, Protocol::simple, estimate_collnet_allreduce_seconds(network.library, c)});
    }
  }
  // a one-rank call has no tree; the loader keeps ring or tree in the list, so only a tree-only list gets here empty
  if (choice.candidates.empty()) choice.candidates.push_back(ring_candidate());
  const auto best = std::min_element(
      choice.candidates.begin(), choice.candidates.end(),
      [](const AlgorithmCandidate& a, const AlgorithmCandidate& b) { return a.estimate_s < b.estimate_s; });
  choice.algorithm = best->algorithm;
  choice.protocol = best->protocol;
  return choice;
}

// NCCL's tuner for a reduce-scatter or allgather: its ring, or at one GPU a node its PAT (run as `bruck`, in Simple),
// whichever it estimates faster (its NVLS and CollNet versions of them are not modelled).
AlgorithmChoice library_halves(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                               const NetworkCost& network) {
  AlgorithmChoice choice;
  choice.rule = network.library.name + " tuner";
  const AlgorithmInfo* ring = &find_algorithm("ring", collective);
  const Schedule ring_schedule = ring->build(ranks, bytes, options);
  LibraryCall call = library_call(network, ring_schedule);
  if (call.hop == HopClass::net) call.bandwidth_Bps *= library_channels(network, ring_schedule);
  choice.candidates.push_back(
      cheapest(ring, network.library, [&](Protocol p) { return estimate_seconds(network.library, p, call); }));
  if (ranks > 1 && call.nodes == ranks && network.library.allows(Protocol::simple)) {
    const NodeSpec& node = network.topology->spec().node;
    PatCall c;
    c.ranks = ranks;
    c.bytes = static_cast<double>(bytes);
    c.nic_Bps = node.nic.bandwidth_Bps * node.nics;
    choice.candidates.push_back(
        {&find_algorithm("bruck", collective), Protocol::simple, estimate_pat_seconds(network.library, c)});
  }
  const auto best = std::min_element(
      choice.candidates.begin(), choice.candidates.end(),
      [](const AlgorithmCandidate& a, const AlgorithmCandidate& b) { return a.estimate_s < b.estimate_s; });
  choice.algorithm = best->algorithm;
  choice.protocol = best->protocol;
  return choice;
}

// MPICH's default allreduce selection (recursive doubling for short buffers, Rabenseifner's for long ones).
AlgorithmChoice mpich_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  constexpr std::uint64_t short_message_bytes = 2048;  // MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE
  std::uint64_t power_of_two = 1;
  while (power_of_two * 2 <= static_cast<std::uint64_t>(std::max(ranks, 1)))
    power_of_two *= 2;
  const std::uint64_t elements = bytes / std::max<std::uint32_t>(1, options.element_bytes);
  const bool short_call = bytes <= short_message_bytes || elements < power_of_two;
  AlgorithmChoice choice;
  choice.rule = "mpich thresholds";
  choice.algorithm = &find_algorithm(short_call ? "butterfly" : "rabenseifner");
  return choice;
}

// MPICH's default reduce-scatter (commutative) and allgather selection, by the size of the whole buffer: a log2 P
// algorithm for short ones, the ring for long ones. MPICH's short-message algorithms are recursive halving and
// doubling on powers of two, Bruck's allgather elsewhere: `bruck` here, with the same alpha-beta cost.
AlgorithmChoice mpich_halves(Collective collective, int ranks, std::uint64_t bytes) {
  // MPIR_CVAR_REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE and MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE (powers of two),
  // MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE (allgather elsewhere)
  constexpr std::uint64_t long_message_bytes = 524288, allgather_short_bytes = 81920;
  const bool power_of_two = std::has_single_bit(static_cast<unsigned>(std::max(ranks, 1)));
  const bool short_call = collective == Collective::reduce_scatter || power_of_two ? bytes < long_message_bytes
                                                                                   : bytes < allgather_short_bytes;
  AlgorithmChoice choice;
  choice.rule = "mpich thresholds";
  choice.algorithm = &find_algorithm(short_call ? "bruck" : "ring", collective);
  return choice;
}

}  // namespace

AlgorithmChoice choose_algorithm(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                                 const NetworkCost& network, bool in_switch) {
  if (collective == Collective::allreduce) {
    const bool library = network.library.enabled() && network.topology != nullptr;
    return library ? library_allreduce(ranks, bytes, options, network, in_switch)
                   : mpich_allreduce(ranks, bytes, options);
  }
  if (collective == Collective::reduce_scatter || collective == Collective::allgather) {
    if (!network.library.enabled() || network.topology == nullptr) return mpich_halves(collective, ranks, bytes);
    return library_halves(collective, ranks, bytes, options, network);
  }
  // the collective's first registered algorithm (the only one of every collective but allreduce)
  for (const AlgorithmInfo& a : algorithms()) {
    if (a.collective != collective) continue;
    AlgorithmChoice choice;
    choice.algorithm = &a;
    choice.rule = "only algorithm";
    for (const AlgorithmInfo& b : algorithms())
      if (&b != &a && b.collective == collective) choice.rule = "first registered";
    return choice;
  }
  throw std::invalid_argument(std::string("no ") + to_string(collective) + " algorithm is registered");
}

ResolvedAllreduce resolve_allreduce(std::string_view name, int ranks, std::uint64_t bytes,
                                    const AlgorithmOptions& options, const NetworkCost& network) {
  if (name != auto_algorithm) {
    const AlgorithmInfo& named = find_algorithm(name);
    if (named.switch_helpers && network.topology == nullptr) {
      throw std::invalid_argument(std::string(name) + " " + switch_not_in_layouts);
    }
    return {&named, Protocol::none};
  }
  const AlgorithmChoice choice =
      choose_algorithm(Collective::allreduce, ranks, bytes, options, network, network.topology != nullptr);
  return {choice.algorithm, choice.protocol};
}

void check_allreduce_name(std::string_view name) {
  if (name == auto_algorithm) return;
  try {
    find_algorithm(name);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) + "; or auto (the library's choice per bucket)");
  }
}

}  // namespace dtsim
