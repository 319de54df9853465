// A cluster as users price it: identical nodes (accelerators, an intra-node interconnect, PCIe, NICs) joined by a
// fabric. Plain typed values in SI units; scenarios/cluster_file.cpp fills them from JSON, sim/topology.cpp turns them
// into a routed graph. Each field's documentation, default and valid range live in scenarios/cluster_file.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/collective_library.hpp"

namespace dtsim {

struct LinkSpec {
  double bandwidth_Bps = 0.0;  // per direction (links are full duplex)
  double latency_s = 0.0;
  // Per-message gap (LogGP's g): the time a sender spends on each message it injects through this link, so that
  // one rank's sends of a step leave one after another (models/alpha_beta.hpp, AlphaBetaGamma::gap_s). A route's gap
  // is the largest of its links'; switch-to-switch links have none.
  double message_gap_s = 0.0;
};

enum class IntraKind : std::uint8_t {
  nvswitch,  // every accelerator has one link to a switch inside the node (NVSwitch)
  nvlink,    // every pair of accelerators has a direct link (fully connected NVLink)
  pcie,      // accelerators talk through the node's PCIe switches (no direct links)
};

struct NodeSpec {
  std::string accelerator = "gpu";  // what a rank runs on, for reports
  int accelerators = 1;
  IntraKind intra_kind = IntraKind::pcie;
  LinkSpec intra;  // nvswitch/nvlink: per accelerator (per pair for nvlink); pcie: unused (pcie link below)
  // nvswitch: the switch reduces in the network (NVLink SHARP, third-generation NVSwitch: H100 and later), so that
  // NCCL's NVLS algorithm (`nvls`) can run; the switch is then an endpoint of its own (Topology::switch_endpoint)
  bool nvls = false;
  LinkSpec pcie;          // accelerator to its PCIe switch, and PCIe switch to its NIC
  LinkSpec cpu_link;      // between PCIe switches of one node (through the CPUs)
  int nics = 1;           // NIC j serves accelerators [j A / nics, (j+1) A / nics)
  LinkSpec nic;           // NIC to the first fabric switch
  double reduce_Bps = 0;  // local reduction throughput of one accelerator
  // Where a rank's transport runs on the processor that computes (kernel TCP: copies, checksums, under one CPU quota),
  // the two slow each other while a data-parallel step's gradients are on the wire during its backward pass: the
  // fraction of its speed the compute keeps, and the fraction of its rate the transport keeps (1 and 1: neither, as
  // with RDMA and GPUDirect).
  double compute_rate_while_transporting = 1;
  double transport_rate_while_computing = 1;
  bool transport_shares_processor() const {
    return compute_rate_while_transporting < 1 || transport_rate_while_computing < 1;
  }
};

enum class FabricKind : std::uint8_t { star, fat_tree, torus, dragonfly, ring };

struct FabricSpec {
  FabricKind kind = FabricKind::star;
  LinkSpec link;  // switch-to-switch links (unused by the star)
  // fat-tree: a k-ary tree of `levels` levels built from radix-k switches (k/2 ports down and k/2 up, the top level
  // all k down); leaves have k/2 endpoint ports and k/(2 oversubscription) uplinks.
  int radix = 0;
  int levels = 0;
  double oversubscription = 1.0;
  // fat-tree, rail-optimised (as DGX SuperPODs are cabled): NIC i of every node on leaf switches of its own (rail i),
  // each rail's leaves holding only its NICs; false: a node's NICs on consecutive leaf ports.
  bool rails = false;
  // star and fat-tree: the switches reduce in the network (InfiniBand SHARP, NCCL's CollNet), so the `sharp`
  // allreduce can run; each switch is then an endpoint of its own (Topology::fabric_switch_endpoint).
  bool sharp = false;
  // torus (2 or 3 dimensions) and ring (1): one switch per coordinate, `endpoints_per_switch` NIC ports on each.
  std::vector<int> dimensions;
  int endpoints_per_switch = 1;
  // dragonfly: `groups` groups of `routers_per_group` all-to-all routers, `global_links_per_router` links to other
  // groups per router, endpoints_per_switch ports per router.
  int groups = 0;
  int routers_per_group = 0;
  int global_links_per_router = 0;
  LinkSpec global_link;
};

struct ClusterSpec {
  std::string name;
  std::string source;  // where the numbers come from
  NodeSpec node;
  int nodes = 1;
  FabricSpec fabric;
  // The collective library the accelerators' collectives run through (NCCL, RCCL): its protocols' costs apply on top
  // of the links'. Not named: plain messages (MPI-like), as before.
  CollectiveLibrary library;

  int accelerators() const { return nodes * node.accelerators; }
  int nic_ports() const { return nodes * node.nics; }
};

const char* to_string(IntraKind kind);
const char* to_string(FabricKind kind);

}  // namespace dtsim
