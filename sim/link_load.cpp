#include "sim/link_load.hpp"

#include <cmath>
#include <numeric>
#include <unordered_map>

#include "sim/topology.hpp"

namespace dtsim {

namespace {

constexpr std::size_t most_pairs = 1U << 22;

// The bytes single chunk `span` moves over repetitions 0..count of `r` (a rotating algorithm's repeated step),
// without visiting every repetition: the chunks it takes run through cycles of modulus / gcd(stride, modulus),
// each cycle summed once (from prefix sums of the chunk sizes where it covers the whole range), the part of a cycle
// left over summed directly or as the cycle less the rest, whichever is shorter. A ring over P ranks thus costs O(1)
// a send instead of O(P).
double repeated_bytes(const Schedule& s, const std::vector<double>& prefix, const StepRepeat& r, std::uint32_t span,
                      std::uint32_t count) {
  const std::uint64_t n = static_cast<std::uint64_t>(count) + 1;
  const std::uint64_t modulus = r.modulus;
  const std::uint64_t cycle = modulus / std::gcd(static_cast<std::uint64_t>(r.stride) % modulus, modulus);
  auto bytes_at = [&](std::uint64_t k) {
    return static_cast<double>(s.span_bytes(r.shifted(span, static_cast<std::uint32_t>(k % cycle))));
  };
  auto sum = [&](std::uint64_t from, std::uint64_t to) {  // repetitions [from, to)
    double total = 0;
    for (std::uint64_t k = from; k < to; ++k)
      total += bytes_at(k);
    return total;
  };
  const std::uint64_t whole = n / cycle;
  const std::uint64_t rest = n % cycle;
  if (whole == 0 && 2 * rest <= cycle) return sum(0, rest);
  const double cycle_bytes = cycle == modulus ? prefix[r.base + modulus] - prefix[r.base] : sum(0, cycle);
  const double part = 2 * rest <= cycle ? sum(0, rest) : cycle_bytes - sum(rest, cycle);
  return static_cast<double>(whole) * cycle_bytes + part;
}

// Adds each send's bytes (every repetition of a repeated step) to pair_bytes[(from, to)]; false past the limits
// (`transfers` counts send operations as stored).
bool add_sends(const Schedule& s, const std::vector<int>& accelerator_of, std::uint64_t& transfers,
               std::uint64_t most_transfers, std::unordered_map<std::uint64_t, double>& pair_bytes) {
  std::vector<double> prefix(s.chunks.size() + 1, 0.0);  // prefix[c]: the bytes of chunks 0..c-1
  for (std::size_t c = 0; c < s.chunks.size(); ++c)
    prefix[c + 1] = prefix[c] + static_cast<double>(s.chunks[c].size_bytes);
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
        if (++transfers > most_transfers) return false;
        if (from == to) continue;
        pair_bytes[from << 32 | to] += repeat != nullptr ? repeated_bytes(s, prefix, *repeat, op.span(), count)
                                                         : static_cast<double>(s.span_bytes(op.span()));
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
  for (const auto& entry : sources_of) {
    const int destination = entry.first;
    topology.routes_to(destination, entry.second, [&](int source, const std::vector<RouteHop>& hops) {
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
