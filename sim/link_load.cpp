#include "sim/link_load.hpp"

#include <cmath>
#include <unordered_map>

#include "sim/topology.hpp"

namespace dtsim {

namespace {

constexpr std::size_t most_pairs = 1U << 22;

// Adds each send's bytes (every repetition of a repeated step) to pair_bytes[(from, to)]; false past the limits.
bool add_sends(const Schedule& s, const std::vector<int>& accelerator_of, std::uint64_t& transfers,
               std::uint64_t most_transfers, std::unordered_map<std::uint64_t, double>& pair_bytes) {
  for (int r = 0; r < s.ranks; ++r) {
    const std::uint64_t first = s.rank_begin[static_cast<std::size_t>(r)];
    const std::uint64_t last = s.rank_begin[static_cast<std::size_t>(r) + 1];
    std::size_t next = s.first_repeat_from(first);
    const auto from = static_cast<std::uint64_t>(accelerator_of[static_cast<std::size_t>(r)]);
    for (std::uint64_t i = first; i < last;) {
      std::uint64_t end = i + 1;
      while (end < last && !s.ops[end].starts_step())
        ++end;
      const StepRepeat* repeat = next < s.repeats.size() && s.repeats[next].op == i ? &s.repeats[next++] : nullptr;
      const std::uint32_t count = repeat != nullptr ? repeat->count : 0;
      for (std::uint64_t j = i; j < end; ++j) {
        const Op op = s.ops[j];
        if (op.kind() != OpKind::send) continue;
        const auto to = static_cast<std::uint64_t>(accelerator_of[static_cast<std::size_t>(op.peer())]);
        transfers += count + 1ULL;
        if (transfers > most_transfers) return false;
        if (from == to) continue;
        double bytes = 0;
        for (std::uint32_t k = 0; k <= count; ++k)
          bytes += static_cast<double>(s.span_bytes(k == 0 ? op.span() : repeat->shifted(op.span(), k)));
        pair_bytes[from << 32 | to] += bytes;
        if (pair_bytes.size() > most_pairs) return false;
      }
      i = end;
    }
  }
  return true;
}

}  // namespace

std::vector<double> step_link_bytes(const std::vector<Schedule>& buckets, const Topology& topology,
                                    const std::vector<int>& accelerator_of, std::uint64_t most_transfers) {
  std::unordered_map<std::uint64_t, double> pair_bytes;  // (source << 32 | destination accelerator) -> bytes
  std::uint64_t transfers = 0;
  for (const Schedule& s : buckets) {
    if (static_cast<std::size_t>(s.ranks) > accelerator_of.size()) return {};
    if (!add_sends(s, accelerator_of, transfers, most_transfers, pair_bytes)) return {};
  }
  // one search per destination for all its sources
  std::unordered_map<int, std::vector<int>> sources_of;
  for (const auto& [key, bytes] : pair_bytes)
    sources_of[static_cast<int>(key & 0xFFFFFFFFU)].push_back(static_cast<int>(key >> 32));
  std::vector<double> link_bytes(2 * topology.links().size(), 0.0);
  for (const auto& [destination, sources] : sources_of) {
    topology.routes_to(destination, sources, [&](int source, const std::vector<RouteHop>& hops) {
      const double bytes =
          pair_bytes.at(static_cast<std::uint64_t>(source) << 32 | static_cast<std::uint64_t>(destination));
      for (const RouteHop& hop : hops)
        link_bytes[2 * static_cast<std::size_t>(hop.link) + (hop.a_to_b ? 0 : 1)] += bytes;
    });
  }
  return link_bytes;
}

LinkClassLoad most_utilised_link_class(const std::vector<double>& link_bytes, const Topology& topology, double step_s) {
  const std::vector<TopologyLink>& links = topology.links();
  if (link_bytes.size() != 2 * links.size() || step_s <= 0) return {};
  auto used = [&](std::size_t i) {
    const double capacity_Bps = links[i / 2].spec.bandwidth_Bps;
    return capacity_Bps > 0 ? link_bytes[i] / (capacity_Bps * step_s) : 0.0;
  };
  std::size_t top = link_bytes.size();
  for (std::size_t i = 0; i < link_bytes.size(); ++i) {
    if (link_bytes[i] > 0 && (top == link_bytes.size() || used(i) > used(top))) top = i;
  }
  if (top == link_bytes.size()) return {};
  LinkClassLoad load;
  load.link_class = to_string(links[top / 2].link_class);
  load.utilisation = used(top);
  for (std::size_t i = 0; i < link_bytes.size(); ++i) {
    if (links[i / 2].link_class == links[top / 2].link_class && std::fabs(used(i) - load.utilisation) <= 5e-4)
      ++load.links;
  }
  return load;
}

}  // namespace dtsim
