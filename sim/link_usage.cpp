#include "sim/link_usage.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/topology.hpp"

namespace dtsim {

namespace {

using Intervals = std::vector<std::pair<double, double>>;

// Merges each link's intervals, drops links nothing crossed, and sorts the most utilised first (then the longest
// busy, then the most bytes; links alike keep their order).
std::vector<LinkUsage> finish(std::vector<LinkUsage> links, std::vector<Intervals>& intervals, double run_s) {
  for (std::size_t i = 0; i < links.size(); ++i) {
    Intervals& in = intervals[i];
    std::sort(in.begin(), in.end());
    LinkUsage& link = links[i];
    for (const auto& [start, end] : in) {
      if (!link.busy.empty() && start <= link.busy.back().second) {
        link.busy.back().second = std::max(link.busy.back().second, end);
      } else {
        link.busy.emplace_back(start, end);
      }
    }
    for (const auto& [start, end] : link.busy)
      link.busy_s += end - start;
    if (run_s > 0) {
      link.busy_fraction = link.busy_s / run_s;
      if (link.capacity_Bps > 0) link.utilisation = static_cast<double>(link.bytes) / (link.capacity_Bps * run_s);
    }
  }
  std::erase_if(links, [](const LinkUsage& l) { return l.bytes == 0; });
  std::stable_sort(links.begin(), links.end(), [](const LinkUsage& a, const LinkUsage& b) {
    if (a.utilisation != b.utilisation) return a.utilisation > b.utilisation;
    return a.busy_s != b.busy_s ? a.busy_s > b.busy_s : a.bytes > b.bytes;
  });
  return links;
}

std::string vertex_name(const Topology& topology, int vertex) {
  return std::string(to_string(topology.vertex_kind(vertex))) + " " + std::to_string(vertex);
}

// Each direction of each topology link (entry 2 l: link l from a to b; 2 l + 1: from b to a), named and classed as
// the reports print them ("nic 9 -> fabric switch 52 (nic)"), with its capacity and nothing carried yet.
std::vector<LinkUsage> cluster_links(const Topology& topology) {
  const std::vector<TopologyLink>& topology_links = topology.links();
  std::vector<LinkUsage> links(2 * topology_links.size());
  for (std::size_t l = 0; l < topology_links.size(); ++l) {
    const TopologyLink& tl = topology_links[l];
    const std::string a = vertex_name(topology, tl.a);
    const std::string b = vertex_name(topology, tl.b);
    const std::string kind = std::string(" (") + to_string(tl.link_class) + ")";
    links[2 * l].name = a + " -> " + b + kind;
    links[2 * l + 1].name = b + " -> " + a + kind;
    links[2 * l].capacity_Bps = links[2 * l + 1].capacity_Bps = tl.spec.bandwidth_Bps;
    links[2 * l].kind = links[2 * l + 1].kind = to_string(tl.link_class);
  }
  return links;
}

}  // namespace

std::vector<LinkGroup> group_links(const std::vector<LinkUsage>& links) {
  using Key = std::tuple<std::string, double, long long, long long>;  // kind, capacity, per mille used and busy
  std::map<Key, std::size_t> index;
  std::vector<LinkGroup> groups;
  for (const LinkUsage& l : links) {
    const Key key{l.kind, l.capacity_Bps, std::llround(1000 * l.utilisation), std::llround(1000 * l.busy_fraction)};
    const auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back({l.kind, l.capacity_Bps, 0, 0, 0.0, 0.0, l.name});
    LinkGroup& g = groups[it->second];
    ++g.count;
    g.bytes = std::max(g.bytes, l.bytes);
    g.busy_fraction = std::max(g.busy_fraction, l.busy_fraction);
    g.utilisation = std::max(g.utilisation, l.utilisation);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const LinkGroup& a, const LinkGroup& b) {
    return a.utilisation != b.utilisation ? a.utilisation > b.utilisation : a.busy_fraction > b.busy_fraction;
  });
  return groups;
}

std::vector<LinkUsage> star_link_usage(const RunTrace& trace, int ranks, double bandwidth_Bps, double run_s) {
  std::vector<LinkUsage> links(2 * static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    links[2 * static_cast<std::size_t>(r)].name = "rank " + std::to_string(r) + " up";
    links[2 * static_cast<std::size_t>(r) + 1].name = "rank " + std::to_string(r) + " down";
  }
  for (LinkUsage& link : links) {
    link.kind = "host";
    link.capacity_Bps = bandwidth_Bps;
  }
  std::vector<Intervals> intervals(links.size());
  for (const TransferRecord& t : trace.transfers) {
    for (const std::size_t i : {2 * static_cast<std::size_t>(t.src), 2 * static_cast<std::size_t>(t.dst) + 1}) {
      links[i].bytes += t.bytes;
      intervals[i].emplace_back(t.start_s, t.end_s);
    }
  }
  return finish(std::move(links), intervals, run_s);
}

std::vector<LinkUsage> cluster_link_usage(const RunTrace& trace, const Topology& topology,
                                          const std::vector<int>& accelerator_of, double run_s) {
  std::vector<LinkUsage> links = cluster_links(topology);
  std::vector<Intervals> intervals(links.size());
  std::map<std::pair<int, int>, std::vector<RouteHop>> routes;  // by (source, destination) accelerator
  for (const TransferRecord& t : trace.transfers) {
    const int from = accelerator_of.at(static_cast<std::size_t>(t.src));
    const int to = accelerator_of.at(static_cast<std::size_t>(t.dst));
    if (from == to) continue;
    auto it = routes.find({from, to});
    if (it == routes.end()) it = routes.emplace(std::make_pair(from, to), topology.route(from, to)).first;
    for (const RouteHop& hop : it->second) {
      const std::size_t i = 2 * static_cast<std::size_t>(hop.link) + (hop.a_to_b ? 0 : 1);
      links[i].bytes += t.bytes;
      intervals[i].emplace_back(t.start_s, t.end_s);
    }
  }
  return finish(std::move(links), intervals, run_s);
}

std::vector<LinkUsage> step_link_usage(const std::vector<double>& link_bytes, const Topology& topology, double step_s) {
  std::vector<LinkUsage> links = cluster_links(topology);
  if (link_bytes.size() != links.size()) return {};  // (not counted: step_link_bytes gave up)
  for (std::size_t i = 0; i < links.size(); ++i)
    links[i].bytes = static_cast<std::uint64_t>(std::llround(link_bytes[i]));
  std::vector<Intervals> none(links.size());
  return finish(std::move(links), none, step_s);
}

}  // namespace dtsim
