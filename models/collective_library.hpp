// The collective library's costs on top of the wire: what NCCL (and RCCL, which shares its design) adds to a
// Schedule's messages. A collective runs in one wire protocol (Simple, LL128 or LL: NCCL's src/include/device.h),
// chosen per call by a tuner that minimises an estimate (NCCL's src/graph/tuning.cc, ncclTopoTuneModel):
//
//   time = launch + base latency(algorithm, protocol) + steps x hop latency(algorithm, protocol, hardware)
//          + bytes x bus factor / (protocol's share of the bandwidth)
//
// and the executors charge the same terms while they simulate the Schedule:
// - the call starts `launch_s + base latency` after it is issued (kernel launch and the library's set-up);
// - each step of a rank that moves a message ends the protocol's hop latency after its transfers (its flags, fences
//   and polling), the largest over the hardware its messages cross (NVLink, PCIe or the network);
// - a message's payload moves at the protocol's share of the wire (LL: 8 bytes of data per 16-byte line; LL128:
//   120 of 128 bytes; Simple: all) times the share of the link the library reaches (NVLink: NCCL's per-link figure
//   over the line rate, about 0.8), at most the protocol's rate cap per message.
// Constants are NCCL v2.30.7-1's published tuning tables (cited where they are set, collective_library.cpp); the
// launch cost is the cluster file's (it varies with the host, the driver and the virtualisation). Protocol::none
// leaves every time exactly as the wire alone gives it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace dtsim {

// The wire protocol a collective call runs in. none: no library costs (plain alpha-beta messages, e.g. MPI).
enum class Protocol : std::uint8_t { none, simple, ll128, ll };
const char* to_string(Protocol protocol);
constexpr std::array<Protocol, 3> library_protocols{Protocol::ll, Protocol::ll128, Protocol::simple};

// The hardware a message crosses, as NCCL's latency tables tell them apart.
enum class HopClass : std::uint8_t { nvlink, pci, net };
const char* to_string(HopClass hop);

// The GPU generation whose tuning constants apply (NCCL's tables differ by architecture).
enum class GpuGeneration : std::uint8_t { volta, ampere, hopper, blackwell };
const char* to_string(GpuGeneration generation);

// Algorithms as NCCL's tables group them: rings (and everything step-by-step), trees, NVLS (the node's switch
// reducing), NVLS tree (NVLS in nodes, trees between them), CollNet (the fabric's switches reducing: SHARP), or PAT
// (NCCL 2.23's logarithmic allgather and reduce-scatter at one GPU a node, which dtsim runs as `bruck`).
enum class LibraryAlgorithm : std::uint8_t { ring, tree, nvls, nvls_tree, collnet, pat };
// NCCL_ALGO's names, lower case: ring, tree, nvls, nvlstree, collnet (CollNetDirect and CollNetChain alike), pat.
const char* to_string(LibraryAlgorithm algorithm);
bool parse_library_algorithm(std::string_view text, LibraryAlgorithm& algorithm);
// NCCL's nvlsEfficiency by generation (v2.30.7-1 src/graph/tuning.cc): the share of the NVLink bandwidth an NVLS
// call reaches; 0 where the generation has no NVLS (Volta, Ampere).
double nvls_efficiency(GpuGeneration generation);

struct ProtocolCost {
  // Payload bytes per byte on the wire, by HopClass: the protocol's line format times the share of the link that
  // NCCL's topology model expects the library to reach (NVLink: its per-link bandwidth over the line rate).
  std::array<double, 3> wire_fraction{1, 1, 1};
  double rate_cap_Bps = 0;                // a message's payload rate at most this (0: no cap)
  double base_latency_s = 0;              // once per call, after the launch
  std::array<double, 3> hop_latency_s{};  // per step, by HopClass
};

struct CollectiveLibrary {
  std::string name;  // "nccl", "rccl"; empty: no library (every call Protocol::none)
  GpuGeneration generation = GpuGeneration::ampere;
  double launch_s = 0;  // per call: kernel launch and host overhead
  // NCCL's tuning tables give the network's latencies (a step of a ring or tree, a level of the NVLS tree, CollNet's
  // and PAT's network parts) as InfiniBand has them; a slower transport (EFA's SRD, TCP offload) takes this many times
  // as long. 1: the tables' values.
  double net_latency_factor = 1;
  // RCCL's MSCCL: an allreduce of up to 16 MiB on one node of 8 fully connected GPUs (one process each) runs MSCCL's
  // all-pairs algorithm instead of the tuner's choice (RCCL enables MSCCL by default on MI300X; its
  // docs/how-to/rccl-usage-tips). sim/algorithm_choice.cpp holds the sizes and protocols of RCCL's algorithm files.
  bool msccl = false;
  // The share of an intra-node link's line rate the library's topology model counts on; 0: NCCL's NVLink figure for
  // the generation (collective_library.cpp). RCCL counts 48 GB/s per xGMI link on MI300X (GFX94X_XGMI_WIDTH in its
  // src/graph/topo.h), 0.75 of the 64 GB/s line rate: the cluster file's library.link_rate over intra.bandwidth.
  double intra_share = 0;
  // Which protocols the tuner may pick (NCCL_PROTO); all by default.
  bool allow_ll = true;
  bool allow_ll128 = true;
  bool allow_simple = true;
  // Which algorithms the tuner may pick for an allreduce (NCCL_ALGO="allreduce:..."): a bit per LibraryAlgorithm,
  // all by default. Ring or tree is always among them (the cluster file's loader insists), since they run every call.
  std::uint8_t allreduce_algorithms = 0xFF;

  bool enabled() const { return !name.empty(); }
  bool allows(Protocol protocol) const;
  bool allows_allreduce(LibraryAlgorithm algorithm) const {
    return (allreduce_algorithms & (1U << static_cast<unsigned>(algorithm))) != 0;
  }
  // The allreduce list as the cluster file writes it ("ring,tree"), or empty when every algorithm is allowed.
  std::string allreduce_restriction() const;
  // The protocol's constants for an algorithm family on a collective that spans `nodes` nodes.
  ProtocolCost cost(Protocol protocol, LibraryAlgorithm algorithm, int nodes) const;
};

// One call as the tuner sees it.
struct LibraryCall {
  LibraryAlgorithm algorithm = LibraryAlgorithm::ring;
  int nodes = 1;
  double steps = 0;              // the Schedule's steps on its longest rank (ring allreduce: 2(P-1))
  double wire_bytes = 0;         // bytes each rank sends over the bottleneck, as the Schedule moves them
  double bandwidth_Bps = 0;      // the bottleneck's bandwidth for one rank
  HopClass hop = HopClass::net;  // the slowest hardware its messages cross (whose bandwidth bounds it)
  // The share of its messages crossing each HopClass: a step's latency on average, as NCCL's formula counts a ring's
  // inter-node steps apart from its intra-node ones (eager messages add their hops along the ring)
  std::array<double, 3> hop_share{0, 0, 1};
};

// The tuner's estimate of a call in `protocol` (seconds), and its choice: the cheapest allowed protocol.
double estimate_seconds(const CollectiveLibrary& library, Protocol protocol, const LibraryCall& call);
Protocol choose_protocol(const CollectiveLibrary& library, const LibraryCall& call);

// The protocol of NCCL's send/receive calls, which no tuner picks (v2.30.7-1 src/enqueue.cc, addP2pToPlan): a peer's
// bytes move in LL when they are at most NCCL_P2P_LL_THRESHOLD (16 KiB) a channel (one channel up to 64 KiB inside a
// node) and the connection has LL buffers; across the network it has none (src/transport/net.cc: send/receive
// connections share buffers, Simple's only), so there it is Simple at every size. All-to-all, gather and scatter are
// such calls (nccl-tests builds them from ncclSend and ncclRecv). Simple also where the library disallows LL.
inline constexpr double p2p_ll_threshold_bytes = 16384;
Protocol p2p_protocol(const CollectiveLibrary& library, double peer_bytes, bool crosses_network);

// NCCL's tree allreduce as its tuner estimates it (src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime):
// a chain through the `per_node` GPUs of each node and a double binary tree across `nodes`, pipelined, so that
//   time = launch + base latency + 2 ((per_node - 1) intra hop + floor(log2 nodes) network hop)
//          + 2 bytes / (bus bandwidth x the tree's share of it x NCCL's correction for the size)
// (algorithm bandwidth half the bus bandwidth, as NCCL counts a tree's up and down passes). The share: 0.92, then LL
// 1/3.8 and LL128 7/9 in one node or 120/128 across nodes, capped per channel across nodes. `bus_Bps`: the line rate
// of one GPU's channels together (one NIC's per channel across nodes), `intra`: the hardware inside a node.
struct TreeCall {
  int nodes = 1;
  int per_node = 1;
  int channels = 1;
  double bytes = 0;
  double bus_Bps = 0;
  HopClass intra = HopClass::nvlink;
};
double estimate_tree_allreduce_seconds(const CollectiveLibrary& library, Protocol protocol, const TreeCall& call);

// The chunk NCCL pipelines a tree allreduce in (src/enqueue.cc, v2.30.7-1): one step of the protocol's buffer
// (buffSize / NCCL_STEPS): Simple 4 MiB / 8 = 512 KiB; LL 64 KiB a step, half of it data: 32 KiB; LL128 614,400 B a
// step, 15 of 16 words data: 576,000 B, halved while a channel's share of `bytes` holds fewer than
// (1 + log2 nodes + 0.1 ppn) x 64 / ppn chunks (down to 128 KiB), then x 16 / ppn (down to 32 KiB).
// NVLS allreduce inside one node as NCCL's tuner estimates it (v2.30.7-1 tuning.cc): latency hwLat[NVLINK][NVLS]
// [Simple] = 25 us in place of the base latency; bus bandwidth channels x bwIntra x nvlsEfficiency x (channels-1) /
// channels x 2 (it "pipelines two operations"), with channels x bwIntra the NVLink rate NCCL's topology counts on
// (link_Bps x its NVLink share) and 16 channels (src/transport/nvls.cc, NCCL_NVLS_NCHANNELS); algorithm bandwidth =
// bus x P / (2 (P-1)).
struct NvlsCall {
  int ranks = 2;
  double bytes = 0;
  double link_Bps = 0;  // one accelerator's link to the switch, each way
};
double estimate_nvls_allreduce_seconds(const CollectiveLibrary& library, const NvlsCall& call);

// NCCL's NVLS tree allreduce across `nodes` nodes as its tuner estimates it (v2.30.7-1 tuning.cc): Simple only;
// latency hwLat[NVLINK][NVLS_TREE] 25 us + 2 floor(log2 nodes) x hwLat[NET][NVLS_TREE] 20.9 us; bus bandwidth the
// least of the NVLink share x nvlsEfficiency x (16-1)/16 x 2, the NICs' at NCCL's network share (x 2 at two nodes: "the
// 2 node case"), and 16 channels x perChMaxNVLSTreeBw (Hopper 57.7 GB/s at two nodes, 45.5 above; Blackwell 96, 80);
// algorithm bandwidth = bus x P / (2 (P-1)).
struct NvlsTreeCall {
  int ranks = 2;
  int nodes = 2;
  double bytes = 0;
  double link_Bps = 0;  // one accelerator's link to its switch, each way
  double nics_Bps = 0;  // the node's NICs together, each way (NCCL's channels x bwInter: a bus bandwidth)
};
double estimate_nvls_tree_allreduce_seconds(const CollectiveLibrary& library, const NvlsTreeCall& call);
// NCCL's NVLS with CollNet (NVLS inside the nodes, SHARP switches between them) as its tuner estimates it: its NVLS
// branch at nNodes > 1, latency 25 us + hwLat[NET][NVLS][Simple] 18 us, bus bandwidth the least of the NVLS NVLink
// rate and the NICs' (not doubled, no per-channel cap); dtsim runs it as `sharp --in-node nvls`.
double estimate_nvls_collnet_allreduce_seconds(const CollectiveLibrary& library, const NvlsTreeCall& call);

// What NCCL's NVLS allreduce has in flight at once inside one node (src/enqueue.cc, v2.30.7-1): one chunk on each of
// its 16 channels (NCCL_NVLS_NCHANNELS), the chunk 128 KiB (NCCL_NVLS_CHUNKSIZE), cut to 64 KiB below 64 chunks a
// channel, 32 KiB below 8 and 16 KiB below 2: dtsim's NVLS segment (one step of its pipeline) in a library.
std::uint64_t nvls_step_bytes(double bytes);

std::uint64_t tree_chunk_bytes(Protocol protocol, double bytes, int channels, int nodes, double per_node);

// NCCL's CollNet Direct allreduce across `nodes` nodes as its tuner estimates it (v2.30.7-1 tuning.cc): Simple only;
// latency 2 (min(1, ppn-1) x 3.7 us + (ppn-1) x 0.4 us) + 31 us (hwLat NVLINK and NET of CollNetDirect, the 0.4 us
// "arity serialization"); bus bandwidth channels x bwIntra (a channel a NIC: the node's NICs together, `intra_Bps`,
// at NCCL's network share, 2 channels a NIC: dtsim's assumption, that NCCL doubles the channels it finds as it does
// for rings, so that one rank a node moves its NIC's rate each way) divided by the GPU:NIC ratio f as f - (f-1)/2,
// x 0.85 from Hopper on; algorithm bandwidth half the bus bandwidth. dtsim runs it as `sharp` at one GPU a node, as
// `hierarchical --inter sharp` above.
struct CollnetCall {
  int nodes = 2;
  int per_node = 1;
  int nics = 1;
  double bytes = 0;
  double intra_Bps = 0;  // the node's NICs together: NCCL's channels x bwIntra, a channel a NIC (x its network share)
};
double estimate_collnet_allreduce_seconds(const CollectiveLibrary& library, const CollnetCall& call);
// NCCL's PAT allgather or reduce-scatter over `ranks` ranks of one GPU a node as its tuner estimates it (v2.30.7-1
// tuning.cc): Simple only; latency 8 us + floor(log2 ranks) x 14 us / 3.5 + ranks x 2.8 us ("still a linear part");
// bandwidth the NICs' (at NCCL's network share) x 0.75, not converted to an algorithm bandwidth; `bytes` is the whole
// buffer (every rank's block).
struct PatCall {
  int ranks = 2;
  double bytes = 0;
  double nic_Bps = 0;  // a node's NICs together, each way
};
double estimate_pat_seconds(const CollectiveLibrary& library, const PatCall& call);

// What CollNet has in flight at once, dtsim's sharp segment (one step of its pipeline) in a library: a Simple chunk
// (512 KiB: 4 MiB buffers of NCCL_STEPS = 8 steps, src/enqueue.cc) on each of 2 channels a NIC (dtsim's assumption,
// as in estimate_collnet_allreduce_seconds), for each of a node's `per_node` local ranks.
std::uint64_t collnet_step_bytes(std::uint64_t per_node);

// Parses "auto", "simple", "ll128", "ll" or "none" (the --protocol flag); nullopt-like: returns false when unknown.
bool parse_protocol(std::string_view text, Protocol& protocol, bool& automatic);
bool parse_generation(std::string_view text, GpuGeneration& generation);
// The GPU generation an NVIDIA accelerator's name says (V100: volta; A100, A10, A30, A40: ampere; H100, H200:
// hopper; B100, B200: blackwell), or empty when it says none.
std::string generation_of_accelerator(const std::string& accelerator);
// The NCCL generation whose constants dtsim gives RCCL on an AMD Instinct accelerator, by its NVIDIA contemporary
// (MI100, MI210, MI250 and MI250X: ampere; MI300X, MI300A, MI325X: hopper; MI350X, MI355X: blackwell), as
// validation/published/clusters/amd-*.json do: an assumption, RCCL's own tables are not read. Empty when the name
// says none of them.
std::string contemporary_generation_of_amd_accelerator(const std::string& accelerator);
// The parts the two functions above know, as text for a message ("V100, A100, ... or B200").
std::string nvidia_part_list();
std::string amd_part_list();
// Whether RCCL runs MSCCL's algorithms by default on this accelerator (RCCL's documentation, how-to/rccl-usage-tips:
// "On MI300X, MSCCL is enabled by default").
bool rccl_msccl_by_default(const std::string& accelerator);

}  // namespace dtsim
