// Shared by `dtsim collective` and `dtsim compare`: the network flags and running one schedule on a backend.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "cli/algorithm_flags.hpp"
#include "cli/flags.hpp"
#include "cli/library_flag.hpp"
#include "models/calibration.hpp"
#include "reports/collective_report.hpp"
#include "sim/topology.hpp"

namespace dtsim::cli {

// Cluster flags of `collective` and `compare` (each adds its own --nodes).
inline constexpr std::array<FlagSpec, 4> cluster_flags{{
    {"cluster", "NAME|FILE", "",
     "a built-in cluster (cpu-10gbe, cpu-25gbe, dgx-a100, dgx-a100-sharp, dgx-b200, dgx-h100, dgx1-v100, dgx2-v100, "
     "mi300x, mi355x, pcie4-100g, v100-nvlink-edr) or a cluster file: ranks are its accelerators and messages take its "
     "routes; replaces --bandwidth, --latency, --gap and --reduce-rate"},
    {"placement", "HOW", "block",
     "--cluster: ranks fill nodes one by one (block) or go to the nodes in turn "
     "(round-robin)"},
    {"order", "ORDER", "topology",
     "--cluster: algorithms order ranks by the topology, node neighbours first as NCCL builds its rings "
     "(topology), or by rank number wherever ranks were placed (rank)"},
    library_flag,
}};

// The network and backend flags of `collective` and `compare`.
inline constexpr std::array<FlagSpec, 10> network_flags{{
    {"bandwidth", "RATE", "10Gbps", "each host's link bandwidth, e.g. 10Gbps, 1.25GBps"},
    {"latency", "TIME", "1us", "one-way latency between two hosts (alpha), e.g. 1us, 0.5ms"},
    {"gap", "TIME", "0.3us",
     "per-message gap (LogGP's g): each further send of a rank's step is posted this much later; "
     "0.3us is MPI over InfiniBand, about 2us over kernel TCP, 0 turns it off (docs/clusters.md)"},
    {"reduce-rate", "RATE", "10GBps", "local reduction throughput (bytes summed per second)"},
    {"backend", "NAME", "auto",
     "simgrid (SimGrid's network, links shared max-min), flow (the same CM02 model as flows, without "
     "SimGrid's per-message cost: for thousands of ranks), analytical (no contention), or auto "
     "(simgrid up to 64 ranks, flow above, and for a schedule of more than a million operations unless --trace or "
     "--real-payload needs simgrid)"},
    {"network-model", "NAME", "CM02", "SimGrid network model: CM02 (alpha-beta exact) or LV08 (SimGrid's TCP model)"},
    {"rank-classes", "ON|OFF", "on",
     "flow only: simulate one rank per class of ranks that provably run alike, with the same times "
     "(on), or every rank (off: to compare)"},
    {"calibration", "FILE", "",
     "a calibration file (dtsim calibrate): its piecewise network fits correct latency and bandwidth "
     "by message size; on the star its largest-message fit and reduction rate replace the defaults of "
     "--latency, --bandwidth and --reduce-rate"},
    {"protocol", "NAME", "auto",
     "the collective library's wire protocol on a cluster whose file names one (cluster.library): auto (the "
     "library's tuner picks per call, as NCCL does), ll, ll128 or simple; none: plain messages without the "
     "library's costs"},
    {"force", "", "",
     "run even when the estimated memory (with --real-payload, its buffers too) exceeds what this "
     "machine has available (it may then fail or swap), or SimGrid (or --samples' runs) would take more than 300 s"},
}};
// network_flags, then the algorithm option flags (cli/algorithm_flags.hpp).
std::vector<FlagSpec> run_flags();

struct RunSettings {
  AlgorithmOptions algorithm;
  AlphaBetaGamma cost;
  std::optional<ClusterSpec> cluster;  // --cluster
  Placement placement = Placement::block;
  RankOrder order = RankOrder::topology;
  std::vector<FactorRange> factors;  // --calibration
  std::string backend;               // "auto", "simgrid", "flow" or "analytical"
  std::string network_model;         // "CM02" or "LV08"
  bool rank_classes = true;          // flow: FlowOptions::lump_ranks
  // --protocol: the wire protocol of the cluster's collective library; automatic: the library's tuner chooses
  Protocol protocol = Protocol::none;
  bool protocol_automatic = true;
  bool real_payload = false;
  bool force = false;  // --force: run even when the memory estimate exceeds what is available
  // simgrid: record the run (steps, messages) and list the links it loaded; `auto_record`: when the schedule is small
  // enough (at most record_ops_limit ops) to record at little cost.
  bool record = false;
  bool auto_record = true;
};
inline constexpr std::size_t record_ops_limit = 1'000'000;
// An all-pairs algorithm (direct allreduce, direct all-to-all) of more operations than this runs on the flow executor
// in classes of ranks found from the network's symmetry, without writing its P x P messages, where those classes are
// exact (a star, a fat-tree whose leaves and pods are full; elsewhere only beyond what can be built, 2^28:
// run_call; docs/flow.md): 16.8 million, a direct all-to-all of 2,897 ranks or a direct allreduce of 2,049.
inline constexpr std::uint64_t all_pairs_ops_limit = 1ULL << 24;

// Ranges of the flags `collective`, `compare` and `verify` share: a rank's buffer (--bytes, --segment-size) up to
// 1 TiB, so that what a million ranks send still counts in 64 bits; link and reduction rates up to 1000 TBps;
// latency and gap up to 10 s.
inline constexpr std::uint64_t max_buffer_bytes = 1ULL << 40;
inline constexpr double max_rate_Bps = 1e15;
inline constexpr double max_delay_s = 10;

// Reads the run_flags and, where the command has them, the cluster_flags.
RunSettings parse_run_settings(const Flags& flags);

// A cluster scaled to some number of nodes, and where each algorithm position runs.
struct ClusterInstance {
  std::shared_ptr<const Topology> topology;
  std::vector<int> accelerator_of;
  std::string description;  // one line for reports
  // Where its rank count came from, for messages: "--nodes 2048 (16384 ranks)" or "--cluster: cluster.nodes = 4 (32
  // ranks)"
  std::string ranks_origin;
};
// One line describing settings.cluster with `nodes` nodes (e.g. "2" or "2, 8"), its placement and order.
std::string cluster_description(const RunSettings& settings, const std::string& nodes);
// Builds settings.cluster with `nodes` nodes; a cluster that cannot be built is a UsageError naming --nodes.
ClusterInstance instantiate_cluster(const RunSettings& settings, int nodes);
// --nodes N (collective) or the cluster file's node count.
int parse_nodes(const Flags& flags, const ClusterSpec& cluster);

// The backend that runs `schedule` ("auto" resolved: sim/executor.hpp's auto_backend by its ranks, and the flow
// executor, which gives SimGrid's CM02 times, for a schedule of more than record_ops_limit operations, whose links
// SimGrid would not record anyway, unless --trace or --real-payload needs SimGrid).
std::string resolved_backend(const RunSettings& settings, const Schedule& schedule);

// Builds the algorithm's schedule; an option it cannot use is a UsageError naming the option's flag, a schedule too
// large to build one naming --ranks (on a cluster: where its node count came from, ClusterInstance::ranks_origin).
Schedule build_schedule(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                        const ClusterInstance* cluster = nullptr);

// Refuses an algorithm that reduces inside a switch (nvls, nvls-tree, sharp) when there is no cluster, before its
// schedule is built (which takes long on many ranks).
void check_switch_helpers(const AlgorithmInfo& algorithm, const ClusterInstance* cluster);

// Times the schedule on the chosen backend (on `cluster` when given) and fills in everything a report needs.
CollectiveRun run_schedule(const Schedule& schedule, const RunSettings& settings,
                           const ClusterInstance* cluster = nullptr);

// One call of the algorithm as its library runs it: on a cluster with a collective library (and --protocol not
// none), split over the library's channels (sim/library_cost.hpp: one ring per NIC across nodes) in the protocol
// asked for or tuned; otherwise the algorithm's schedule as run_schedule times it.
CollectiveRun run_call(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                       const RunSettings& settings, const ClusterInstance* cluster = nullptr);

// `--algorithm auto`: the library's choice for one call (sim/algorithm_choice.hpp), the settings to run it with (its
// tuned protocol, unless --protocol named one), and how it was chosen, for the report.
struct CallChoice {
  const AlgorithmInfo* algorithm = nullptr;
  RunSettings settings;
  std::string chosen_by;
  std::vector<WeighedAlgorithm> weighed;
};
CallChoice choose_call(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                       const RunSettings& settings, const ClusterInstance* cluster = nullptr);

}  // namespace dtsim::cli
