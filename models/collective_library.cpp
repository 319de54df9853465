#include "models/collective_library.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <span>
#include <string>

namespace dtsim {

const char* to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::none: return "none";
    case Protocol::simple: return "simple";
    case Protocol::ll128: return "ll128";
    case Protocol::ll: return "ll";
  }
  return "?";
}

const char* to_string(HopClass hop) {
  switch (hop) {
    case HopClass::nvlink: return "nvlink";
    case HopClass::pci: return "pci";
    case HopClass::net: return "net";
  }
  return "?";
}

const char* to_string(GpuGeneration generation) {
  switch (generation) {
    case GpuGeneration::volta: return "volta";
    case GpuGeneration::ampere: return "ampere";
    case GpuGeneration::hopper: return "hopper";
    case GpuGeneration::blackwell: return "blackwell";
  }
  return "?";
}

namespace {
constexpr std::array<LibraryAlgorithm, 6> library_algorithms{LibraryAlgorithm::ring,    LibraryAlgorithm::tree,
                                                             LibraryAlgorithm::nvls,    LibraryAlgorithm::nvls_tree,
                                                             LibraryAlgorithm::collnet, LibraryAlgorithm::pat};
}  // namespace

const char* to_string(LibraryAlgorithm algorithm) {
  switch (algorithm) {
    case LibraryAlgorithm::ring: return "ring";
    case LibraryAlgorithm::tree: return "tree";
    case LibraryAlgorithm::nvls: return "nvls";
    case LibraryAlgorithm::nvls_tree: return "nvlstree";
    case LibraryAlgorithm::collnet: return "collnet";
    case LibraryAlgorithm::pat: return "pat";
  }
  return "?";
}

bool parse_library_algorithm(std::string_view text, LibraryAlgorithm& algorithm) {
  for (const LibraryAlgorithm a : library_algorithms) {
    if (text == to_string(a)) {
      algorithm = a;
      return true;
    }
  }
  return false;
}

std::string CollectiveLibrary::allreduce_restriction() const {
  std::string list;
  bool all = true;
  for (const LibraryAlgorithm a : library_algorithms) {
    if (a == LibraryAlgorithm::pat) continue;  // (not an allreduce)
    if (!allows_allreduce(a)) {
      all = false;
      continue;
    }
    list += (list.empty() ? "" : ",") + std::string(to_string(a));
  }
  return all ? std::string() : list;
}

bool CollectiveLibrary::allows(Protocol protocol) const {
  switch (protocol) {
    case Protocol::none: return false;
    case Protocol::simple: return allow_simple;
    case Protocol::ll128: return allow_ll128;
    case Protocol::ll: return allow_ll;
  }
  return false;
}

namespace {

constexpr double us = 1e-6;
constexpr double GBps = 1e9;

// NCCL v2.30.7-1, src/graph/tuning.cc (ncclTunerConstantsDefaults), microseconds. Index: protocol LL, LL128, Simple.
// baseLat by algorithm: Tree {6.8, 14.0, 8.4}, Ring {6.6, 14.0, 8.4}.
constexpr double base_latency_us[2][3] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}};
// hwLat[hardware][algorithm][protocol]: NVLINK Ring {0.6, 1.9, 3.4}, Tree {0.6, 1.25, 4.0}; PCI Ring {1.0, 2.5, 5.7},
// Tree {1.0, 1.9, 4.0}; NET Ring {2.7, 4.0, 14.0}, Tree {5.0, 8.5, 14.0}.
constexpr double hop_latency_us[3][2][3] = {
    {{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}},
    {{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}},
    {{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}},
};
// llMaxBws (GB/s, the LL protocol's bus bandwidth at most), by generation and 1 node / 2 nodes / more:
// Volta {39.0, 39.0, 20.4}, Ampere {87.7, 22.5, 19.0}, Hopper {141.0, 45.0, 35.0}, Blackwell {282.0, 90.0, 70.0}.
// (NCCL indexes the multi-node columns by CPU vendor; dtsim by generation, the rows those vendors' machines use.)
constexpr double ll_max_GBps[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};

// The share of a link's line rate NCCL's topology model counts on (v2.30.7-1 src/graph/topo.h): NVLink per link
// SM70 20.0, SM80 20.0, SM90 20.6, SM100 40.1 GB/s, against line rates of 25, 25, 25 and 50 GB/s per direction
// (NVLink 2, 3, 4 and 5); the network NET_BW 12.0 GB/s for 100 Gbit/s (12.5 GB/s). PCIe: cluster files give usable
// PCIe rates already (1).
// perChMaxTreeBws and perChMaxTreeLL128Bws (GB/s per channel, 1 node / 2 nodes / more), by generation:
// Volta {26.5, 18.5, 10.0} / {20, 20, 20}; Ampere {24.0, 23.6, 17.8} / {20, 20, 20}; Hopper {38.7, 41.4, 36.0} /
// {36.7, 36.7, 29.0}; Blackwell {70.0, 42.8, 24.0} / {55.6, 31.67, 20.0}.
constexpr double tree_max_GBps[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double tree_ll128_max_GBps[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
// treeCorrectionFactor[protocol LL, LL128, Simple][log2(bytes / 64)], 64 B to 256 MiB.
constexpr double tree_correction[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

constexpr double nccl_nvlink_share[4] = {20.0 / 25.0, 20.0 / 25.0, 20.6 / 25.0, 40.1 / 50.0};
// The intra-node share a library counts on: the cluster file's (CollectiveLibrary::intra_share) or NCCL's.
double intra_link_share(const CollectiveLibrary& library) {
  return library.intra_share > 0 ? library.intra_share : nccl_nvlink_share[static_cast<int>(library.generation)];
}
// NVLS: its latency, hwLat[NVLINK][NVLS][Simple] (tuning.cc), and its channels (NCCL_NVLS_NCHANNELS, src/transport/
// nvls.cc)
constexpr double nvls_latency_us = 25.0;
// NVLS tree: hwLat[NET][NVLS_TREE][Simple] 20.9 us a tree level each way; perChMaxNVLSTreeBws (GB/s, 2 nodes / more):
// Hopper {57.7, 45.5}, Blackwell {96.0, 80.0} (tuning.cc)
constexpr double nvls_tree_net_us = 20.9;
constexpr double nvls_collnet_net_us = 18.0;  // hwLat[NET][NVLS][Simple]
constexpr double nvls_tree_max_GBps[4][2] = {{0, 0}, {0, 0}, {57.7, 45.5}, {96.0, 80.0}};
int nccl_floor_log2(int n) {
  int l = 0;
  while ((2 << l) <= n)
    ++l;
  return n > 1 ? l : 0;
}
constexpr double nvls_channels = 16;
constexpr double net_share = 12.0 / 12.5;
// CollNet Direct (SHARP): hwLat[NVLINK][COLLNET_DIRECT][Simple] 3.7 us, hwLat[NET][COLLNET_DIRECT][Simple] 31 us, the
// 0.4 us a local rank "arity serialization" (tuning.cc); base latency 0; its bus bandwidth x 0.85 from SM90 on.
// PAT: baseLat 8 us (Simple), hwLat[NVLINK][PAT] 4 us, hwLat[NET][TREE][Simple] 14 us at one GPU a node, the
// log part's interLat / 3.5 and 2.8 us a rank, its bus bandwidth x 0.75 (tuning.cc)
constexpr double pat_base_us = 8.0;
constexpr double pat_net_step_us = 14.0 / 3.5;
constexpr double pat_rank_us = 2.8;
constexpr double pat_efficiency = 0.75;
constexpr double collnet_intra_us = 3.7;
constexpr double collnet_net_us = 31.0;
constexpr double collnet_arity_us = 0.4;
double collnet_efficiency(GpuGeneration generation) {
  return generation == GpuGeneration::hopper || generation == GpuGeneration::blackwell ? 0.85 : 1.0;
}

int protocol_index(Protocol protocol) {
  switch (protocol) {
    case Protocol::ll: return 0;
    case Protocol::ll128: return 1;
    default: return 2;
  }
}

}  // namespace

double nvls_efficiency(GpuGeneration generation) {
  constexpr double efficiency[4] = {0.0, 0.0, 0.85, 0.74};  // Volta, Ampere, Hopper, Blackwell
  return efficiency[static_cast<int>(generation)];
}

ProtocolCost CollectiveLibrary::cost(Protocol protocol, LibraryAlgorithm algorithm, int nodes) const {
  ProtocolCost c;
  if (protocol == Protocol::none) return c;
  if (algorithm == LibraryAlgorithm::nvls || algorithm == LibraryAlgorithm::nvls_tree) {
    // NVLS runs in Simple only; NCCL's latency for it is the NVLink hardware latency of NVLS, 25 us, once (it replaces
    // the base latency: hwLat[NVLINK][NVLS][Simple]), and its bandwidth the NVLink share times nvlsEfficiency; the NVLS
    // tree adds 20.9 us a level of its trees between nodes, each way
    c.base_latency_s = nvls_latency_us * us;
    if (algorithm == LibraryAlgorithm::nvls_tree)
      c.base_latency_s += 2 * nccl_floor_log2(nodes) * nvls_tree_net_us * net_latency_factor * us;
    const double share = intra_link_share(*this) * nvls_efficiency(generation);
    c.wire_fraction = {share, 1, net_share};
    return c;
  }
  if (algorithm == LibraryAlgorithm::pat) {
    // PAT runs in Simple only: its base latency and the linear part (a rank a node: `nodes` ranks) once, its log
    // part a step, and the network share x 0.75
    c.base_latency_s = (pat_base_us + pat_rank_us * nodes) * us;
    c.hop_latency_s = {4.0 * us, 4.0 * us, pat_net_step_us * net_latency_factor * us};
    c.wire_fraction = {intra_link_share(*this) * pat_efficiency, pat_efficiency, net_share * pat_efficiency};
    return c;
  }
  if (algorithm == LibraryAlgorithm::collnet) {
    // CollNet runs in Simple only; its latency once a call (the network's 31 us, and one NVLink hop each way where a
    // node has several GPUs: NCCL's formula, without its 0.4 us a local rank), no per-step latency, and the network
    // share times 0.85 from Hopper on
    c.base_latency_s = (collnet_net_us * net_latency_factor + (nodes > 1 ? 2 * collnet_intra_us : 0)) * us;
    c.wire_fraction = {intra_link_share(*this), 1, net_share * collnet_efficiency(generation)};
    return c;
  }
  const int p = protocol_index(protocol);
  const int a = algorithm == LibraryAlgorithm::ring ? 0 : 1;
  c.base_latency_s = base_latency_us[a][p] * us;
  for (int h = 0; h < 3; ++h)
    c.hop_latency_s[static_cast<std::size_t>(h)] =
        hop_latency_us[h][a][p] * (h == static_cast<int>(HopClass::net) ? net_latency_factor : 1.0) * us;
  // Payload per wire byte (src/include/device.h): LL lines carry 8 data bytes in 16; LL128 lines 120 in 128, which
  // the tuner rounds to 0.92 for rings; Simple moves the data itself.
  double format = 1;
  switch (protocol) {
    case Protocol::ll: {
      format = 0.5;
      const int column = nodes <= 1 ? 0 : nodes == 2 ? 1 : 2;
      c.rate_cap_Bps = ll_max_GBps[static_cast<int>(generation)][column] * GBps;
      break;
    }
    case Protocol::ll128: format = 0.92; break;
    default: break;
  }
  c.wire_fraction = {format * intra_link_share(*this), format, format * net_share};
  return c;
}

double estimate_seconds(const CollectiveLibrary& library, Protocol protocol, const LibraryCall& call) {
  const ProtocolCost c = library.cost(protocol, call.algorithm, call.nodes);
  double rate = call.bandwidth_Bps * c.wire_fraction[static_cast<std::size_t>(call.hop)];
  if (c.rate_cap_Bps > 0) rate = std::min(rate, c.rate_cap_Bps);
  const double move_s = rate > 0 ? call.wire_bytes / rate : 0;
  double hop_s = 0;
  for (std::size_t h = 0; h < 3; ++h)
    hop_s += call.hop_share[h] * c.hop_latency_s[h];
  return library.launch_s + c.base_latency_s + call.steps * hop_s + move_s;
}

double estimate_tree_allreduce_seconds(const CollectiveLibrary& library, Protocol protocol, const TreeCall& call) {
  const ProtocolCost c = library.cost(protocol, LibraryAlgorithm::tree, call.nodes);
  // (NCCL's log2i: the floor)
  const int levels = call.nodes > 1 ? static_cast<int>(std::floor(std::log2(static_cast<double>(call.nodes)))) : 0;
  const double hops_s = 2.0 * ((call.per_node - 1) * c.hop_latency_s[static_cast<std::size_t>(call.intra)] +
                               levels * c.hop_latency_s[static_cast<std::size_t>(HopClass::net)]);
  // NCCL v2.30.7-1 tuning.cc: a tree allreduce's bus bandwidth is min(B x 0.92, channels x perChMaxTreeBw), then LL
  // x 1/3.8 (at most llMaxBw), LL128 x 7/9 in one node or x 120/128 across nodes (at most channels x
  // perChMaxTreeLL128Bw); B counts the link share NCCL's topology model expects (Simple's wire fraction here). The
  // per-channel caps apply across nodes only: inside one node dtsim does not know NCCL's channel count.
  const HopClass slowest = call.nodes > 1 ? HopClass::net : call.intra;
  const double share = library.cost(Protocol::simple, LibraryAlgorithm::tree, call.nodes)
                           .wire_fraction[static_cast<std::size_t>(slowest)];
  const int g = static_cast<int>(library.generation);
  const int column = call.nodes <= 1 ? 0 : call.nodes == 2 ? 1 : 2;
  const bool capped = call.nodes > 1 && call.channels > 0;
  double bus = call.bus_Bps * share * 0.92;
  if (capped) bus = std::min(bus, call.channels * tree_max_GBps[g][column] * GBps);
  if (protocol == Protocol::ll) bus = std::min(bus / 3.8, c.rate_cap_Bps > 0 ? c.rate_cap_Bps : bus);
  if (protocol == Protocol::ll128) {
    bus *= call.nodes <= 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    if (capped) bus = std::min(bus, call.channels * tree_ll128_max_GBps[g][column] * GBps);
  }
  // "Trees are not perfectly sticking to the model for medium sizes": NCCL's correction by size, powers of two from
  // 64 B (treeCorrectionFactor, by protocol LL, LL128, Simple)
  if (call.bytes >= 64) {
    const auto log_size = static_cast<int>(std::floor(std::log2(call.bytes / 64.0)));
    if (log_size < 23) bus *= tree_correction[protocol_index(protocol)][log_size];
  }
  const double move_s = bus > 0 ? 2.0 * call.bytes / bus : 0;
  return library.launch_s + c.base_latency_s + hops_s + move_s;
}

double estimate_nvls_allreduce_seconds(const CollectiveLibrary& library, const NvlsCall& call) {
  // (cost(): the NVLink share times nvlsEfficiency, and the 25 us)
  const ProtocolCost c = library.cost(Protocol::simple, LibraryAlgorithm::nvls, 1);
  const double bus = call.link_Bps * c.wire_fraction[static_cast<std::size_t>(HopClass::nvlink)] * (nvls_channels - 1) /
                     nvls_channels * 2;
  const double algorithm_Bps = bus * call.ranks / (2.0 * (call.ranks - 1));
  const double move_s = algorithm_Bps > 0 ? call.bytes / algorithm_Bps : std::numeric_limits<double>::infinity();
  return library.launch_s + c.base_latency_s + move_s;
}

double estimate_pat_seconds(const CollectiveLibrary& library, const PatCall& call) {
  const ProtocolCost c = library.cost(Protocol::simple, LibraryAlgorithm::pat, call.ranks);
  const double steps = nccl_floor_log2(call.ranks);
  const double bus = call.nic_Bps * c.wire_fraction[static_cast<std::size_t>(HopClass::net)];
  const double move_s = bus > 0 ? call.bytes / bus : std::numeric_limits<double>::infinity();
  return library.launch_s + c.base_latency_s + steps * c.hop_latency_s[static_cast<std::size_t>(HopClass::net)] +
         move_s;
}

double estimate_collnet_allreduce_seconds(const CollectiveLibrary& library, const CollnetCall& call) {
  const double ppn = std::max(1, call.per_node);
  const double latency_us = 2 * (std::min(1.0, ppn - 1) * collnet_intra_us + (ppn - 1) * collnet_arity_us) +
                            collnet_net_us * library.net_latency_factor;
  double factor = ppn / std::max(1, call.nics);  // the GPU:NIC ratio
  factor -= (factor - 1) / 2;
  const double bus = 2 * call.intra_Bps * net_share / std::max(1.0, factor) * collnet_efficiency(library.generation);
  const double move_s = bus > 0 ? call.bytes / (bus / 2) : std::numeric_limits<double>::infinity();
  return library.launch_s + latency_us * us + move_s;
}

double estimate_nvls_tree_allreduce_seconds(const CollectiveLibrary& library, const NvlsTreeCall& call) {
  const ProtocolCost c = library.cost(Protocol::simple, LibraryAlgorithm::nvls_tree, call.nodes);
  const double intra = call.link_Bps * c.wire_fraction[static_cast<std::size_t>(HopClass::nvlink)] *
                       (nvls_channels - 1) / nvls_channels * 2;
  const double inter = call.nics_Bps * net_share * (call.nodes <= 2 ? 2 : 1);
  const double cap =
      nvls_channels * nvls_tree_max_GBps[static_cast<int>(library.generation)][call.nodes <= 2 ? 0 : 1] * GBps;
  const double bus = std::min({intra, inter, cap});
  const double algorithm_Bps = bus * call.ranks / (2.0 * (call.ranks - 1));
  const double move_s = algorithm_Bps > 0 ? call.bytes / algorithm_Bps : std::numeric_limits<double>::infinity();
  return library.launch_s + c.base_latency_s + move_s;
}

double estimate_nvls_collnet_allreduce_seconds(const CollectiveLibrary& library, const NvlsTreeCall& call) {
  const ProtocolCost c = library.cost(Protocol::simple, LibraryAlgorithm::nvls, 1);  // (its 25 us and NVLink share)
  const double intra = call.link_Bps * c.wire_fraction[static_cast<std::size_t>(HopClass::nvlink)] *
                       (nvls_channels - 1) / nvls_channels * 2;
  const double bus = std::min(intra, call.nics_Bps * net_share);
  const double algorithm_Bps = bus * call.ranks / (2.0 * (call.ranks - 1));
  const double move_s = algorithm_Bps > 0 ? call.bytes / algorithm_Bps : std::numeric_limits<double>::infinity();
  return library.launch_s + c.base_latency_s + nvls_collnet_net_us * library.net_latency_factor * us + move_s;
}

std::uint64_t collnet_step_bytes(std::uint64_t per_node) {
  constexpr std::uint64_t simple_chunk = (1ULL << 22) / 8, channels_per_nic = 2;
  return std::max<std::uint64_t>(1, per_node) * channels_per_nic * simple_chunk;
}

std::uint64_t nvls_step_bytes(double bytes) {
  double chunk = 128 * 1024;
  if (bytes < 64 * nvls_channels * chunk) chunk = 65536;
  if (bytes < 8 * nvls_channels * chunk) chunk = 32768;
  if (bytes < 2 * nvls_channels * chunk) chunk = 16384;
  return static_cast<std::uint64_t>(nvls_channels * chunk);
}

std::uint64_t tree_chunk_bytes(Protocol protocol, double bytes, int channels, int nodes, double per_node) {
  constexpr std::uint64_t steps = 8;  // NCCL_STEPS
  switch (protocol) {
    case Protocol::ll: return 8ULL * 512 * steps * 16 / steps / 2;  // DEFAULT_LL_BUFFSIZE a step, half data
    case Protocol::ll128: {
      std::uint64_t chunk = 120ULL * 640 * steps * 8 / steps / 16 * 15;  // DEFAULT_LL128_BUFFSIZE a step, 15/16 data
      const double ppn = std::max(1.0, per_node);
      const double depth = 1 + std::floor(std::log2(std::max(1, nodes))) + 0.1 * ppn;
      const double per_channel = bytes / std::max(1, channels);
      while (per_channel / static_cast<double>(chunk) < depth * 64 / ppn && chunk > 131072)
        chunk /= 2;
      while (per_channel / static_cast<double>(chunk) < depth * 16 / ppn && chunk > 32768)
        chunk /= 2;
      return chunk;
    }
    default: return (1ULL << 22) / steps;  // DEFAULT_BUFFSIZE a step
  }
}

Protocol choose_protocol(const CollectiveLibrary& library, const LibraryCall& call) {
  if (!library.enabled()) return Protocol::none;
  Protocol best = Protocol::none;
  double best_s = std::numeric_limits<double>::infinity();
  for (const Protocol p : library_protocols) {
    if (!library.allows(p)) continue;
    const double s = estimate_seconds(library, p, call);
    if (s < best_s) {
      best_s = s;
      best = p;
    }
  }
  return best;
}

Protocol p2p_protocol(const CollectiveLibrary& library, double peer_bytes, bool crosses_network) {
  if (!library.enabled()) return Protocol::none;
  if (!crosses_network && peer_bytes <= p2p_ll_threshold_bytes && library.allows(Protocol::ll)) return Protocol::ll;
  return Protocol::simple;
}

bool parse_protocol(std::string_view text, Protocol& protocol, bool& automatic) {
  automatic = false;
  if (text == "auto") {
    automatic = true;
    protocol = Protocol::none;
    return true;
  }
  for (const Protocol p : {Protocol::none, Protocol::simple, Protocol::ll128, Protocol::ll}) {
    if (text == to_string(p)) {
      protocol = p;
      return true;
    }
  }
  return false;
}

bool parse_generation(std::string_view text, GpuGeneration& generation) {
  for (const GpuGeneration g :
       {GpuGeneration::volta, GpuGeneration::ampere, GpuGeneration::hopper, GpuGeneration::blackwell}) {
    if (text == to_string(g)) {
      generation = g;
      return true;
    }
  }
  return false;
}

namespace {

// Whether `name` (upper case) names `part` as a part number: at the start of a word and not followed by a digit
// ("A100-SXM4-80GB", "NVIDIA H100", "GB200" for its B200s, "AMD Instinct MI300X").
bool names_part(const std::string& name, std::string_view part) {
  for (std::size_t at = name.find(part); at != std::string::npos; at = name.find(part, at + 1)) {
    const bool starts = at == 0 || !std::isalpha(static_cast<unsigned char>(name[at - 1])) ||
                        (at == 1 && name[0] == 'G');  // (GB200, GH200)
    const std::size_t end = at + part.size();
    const bool ends = end == name.size() || !std::isdigit(static_cast<unsigned char>(name[end]));
    if (starts && ends) return true;
  }
  return false;
}

std::string upper(const std::string& text) {
  std::string out = text;
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
  return out;
}

struct PartGeneration {
  const char* part;
  const char* generation;
};
// NVIDIA parts by generation; AMD Instinct parts by their NVIDIA contemporary ("MI250" also names MI250X)
constexpr PartGeneration nvidia_parts[] = {
    {"V100", "volta"},  {"A100", "ampere"}, {"A10", "ampere"},     {"A30", "ampere"},     {"A40", "ampere"},
    {"H100", "hopper"}, {"H200", "hopper"}, {"B100", "blackwell"}, {"B200", "blackwell"}, {"B300", "blackwell"}};
constexpr PartGeneration amd_parts[] = {{"MI100", "ampere"},     {"MI210", "ampere"},    {"MI250", "ampere"},
                                        {"MI300X", "hopper"},    {"MI300A", "hopper"},   {"MI325X", "hopper"},
                                        {"MI350X", "blackwell"}, {"MI355X", "blackwell"}};

std::string generation_in(std::span<const PartGeneration> parts, const std::string& accelerator) {
  const std::string name = upper(accelerator);
  for (const PartGeneration& p : parts)
    if (names_part(name, p.part)) return p.generation;
  return "";
}

std::string part_list(std::span<const PartGeneration> parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == parts.size() ? " or " : ", ") + parts[i].part;
  return out;
}

}  // namespace

std::string generation_of_accelerator(const std::string& accelerator) {
  return generation_in(nvidia_parts, accelerator);
}

std::string contemporary_generation_of_amd_accelerator(const std::string& accelerator) {
  return generation_in(amd_parts, accelerator);
}

std::string nvidia_part_list() { return part_list(nvidia_parts); }

std::string amd_part_list() { return part_list(amd_parts); }

bool rccl_msccl_by_default(const std::string& accelerator) { return names_part(upper(accelerator), "MI300X"); }

}  // namespace dtsim
