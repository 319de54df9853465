#include "sim/all_pairs_lumping.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/engine_constants.hpp"
#include "sim/library_cost.hpp"
#include "sim/lumping_keys.hpp"
#include "sim/topology.hpp"

namespace dtsim::lumping {
namespace {

using engine::infinity;

// Colour refinement over the topology alone: vertices (kind, positions placed on them, and the multisets of their
// outgoing and incoming link-direction classes) and link directions (resource 2 l: link l from a to b, 2 l + 1 back;
// by capacity, latency, gap, kind, and their ends' classes), to the coarsest stable colouring.
struct TopologyClasses {
  std::vector<std::uint32_t> vertex;
  std::vector<std::uint32_t> resource;
  std::uint32_t resource_classes = 0;
};

TopologyClasses refine_topology(const Topology& t, const std::vector<int>& accelerator_of) {
  const auto vertices = static_cast<std::size_t>(t.vertex_count());
  const std::vector<TopologyLink>& links = t.links();
  const std::size_t resources = 2 * links.size();
  auto tail = [&](std::size_t e) { return static_cast<std::size_t>(e % 2 == 0 ? links[e / 2].a : links[e / 2].b); };
  auto head = [&](std::size_t e) { return static_cast<std::size_t>(e % 2 == 0 ? links[e / 2].b : links[e / 2].a); };
  std::vector<std::uint64_t> placed(vertices, 0);
  for (const int endpoint : accelerator_of)
    ++placed[static_cast<std::size_t>(t.accelerator_vertex(endpoint))];
  std::vector<std::pair<std::uint64_t, std::uint64_t>> vertex_init(vertices);
  for (std::size_t v = 0; v < vertices; ++v)
    vertex_init[v] = {static_cast<std::uint64_t>(t.vertex_kind(static_cast<int>(v))), placed[v]};
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>> resource_init(resources);
  for (std::size_t e = 0; e < resources; ++e) {
    const TopologyLink& link = links[e / 2];
    resource_init[e] = {bits_of(link.spec.bandwidth_Bps), bits_of(link.spec.latency_s),
                        bits_of(link.spec.message_gap_s),
                        static_cast<std::uint64_t>(link.link_class) * 2 + (link.to_reducing_switch ? 1 : 0)};
  }
  TopologyClasses c;
  std::vector<std::uint32_t> order;
  std::uint32_t vertex_classes = dense_ids(vertex_init, c.vertex, order);
  c.resource_classes = dense_ids(resource_init, c.resource, order);
  using VertexKey = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>;
  using ResourceKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  std::vector<VertexKey> vertex_keys(vertices);
  std::vector<ResourceKey> resource_keys(resources);
  while (true) {
    for (std::size_t v = 0; v < vertices; ++v)
      vertex_keys[v] = {c.vertex[v], 0, 0, 0, 0};
    for (std::size_t e = 0; e < resources; ++e) {
      const std::uint64_t out = mix(c.resource[e] + 1), in = mix(c.resource[e] + 0x51ed27ULL);
      VertexKey& from = vertex_keys[tail(e)];
      std::get<1>(from) += out;
      std::get<2>(from) += out * out;
      VertexKey& to = vertex_keys[head(e)];
      std::get<3>(to) += in;
      std::get<4>(to) += in * in;
    }
    const std::uint32_t new_vertices = dense_ids(vertex_keys, c.vertex, order);
    for (std::size_t e = 0; e < resources; ++e)
      resource_keys[e] = {c.resource[e], c.vertex[tail(e)], c.vertex[head(e)]};
    const std::uint32_t new_resources = dense_ids(resource_keys, c.resource, order);
    if (new_vertices == vertex_classes && new_resources == c.resource_classes) return c;
    vertex_classes = new_vertices;
    c.resource_classes = new_resources;
  }
}

// A message class: from a representative's messages alike in receiver class and route.
struct Template {
  std::uint32_t src_class = 0;
  std::uint32_t dst_class = 0;
  std::uint64_t from_representative = 0;  // its messages from the sender class's representative
  std::vector<std::pair<std::uint32_t, std::uint32_t>> link_classes;  // (resource class, links of it on the route)
  double latency_s = 0;
  double narrowest_Bps = infinity;
  double gap_s = 0;
  HopClass hop = HopClass::net;
};

// How exact the classes are on this network, from its refinement.
AllPairsFit fit_of(const Topology& t, const TopologyClasses& tc) {
  if (t.is_star() || t.spec().fabric.kind == FabricKind::star) return AllPairsFit::exact;
  if (t.spec().fabric.kind != FabricKind::fat_tree || t.spec().fabric.rails) return AllPairsFit::unsupported;
  std::unordered_map<int, std::uint32_t> class_of_level;
  for (int v = 0; v < t.vertex_count(); ++v) {
    if (t.vertex_kind(v) != VertexKind::fabric_switch) continue;
    const auto [it, fresh] = class_of_level.try_emplace(t.fabric_level(v), tc.vertex[static_cast<std::size_t>(v)]);
    if (!fresh && it->second != tc.vertex[static_cast<std::size_t>(v)]) return AllPairsFit::averaged;
  }
  return AllPairsFit::exact;
}

}  // namespace

AllPairsFit all_pairs_fit(const FlowOptions& o) {
  return fit_of(*o.topology, refine_topology(*o.topology, o.accelerator_of));
}

const char* to_string(AllPairsFit fit) {
  switch (fit) {
    case AllPairsFit::exact: return "exact";
    case AllPairsFit::averaged: return "averaged";
    case AllPairsFit::unsupported: break;
  }
  return "unsupported";
}

std::optional<Lumping> all_pairs_classes(const AllPairs& pairs, const FlowOptions& o, const SegmentLibraryCost& library,
                                         AllPairsFit allowed, AllPairsFit* fit) {
  const Topology& t = *o.topology;
  const auto n = static_cast<std::size_t>(pairs.ranks);
  // every message timed at the largest chunk, where the full engine would pad them too
  const std::uint64_t largest = pairs.largest_chunk_bytes(), smallest = pairs.smallest_chunk_bytes();
  if (smallest < largest && padded_bytes(smallest, largest, o) == 0) {
    throw std::invalid_argument(std::string(pairs.algorithm) +
                                ": its chunks differ by more than the padding that times them alike");
  }
  const TopologyClasses tc = refine_topology(t, o.accelerator_of);
  const AllPairsFit how = fit_of(t, tc);
  if (fit != nullptr) *fit = how;
  if (how > allowed) return std::nullopt;
  std::vector<std::uint64_t> resource_class_size(tc.resource_classes, 0);
  for (const std::uint32_t d : tc.resource)
    ++resource_class_size[d];

  Lumping l;
  // rank classes: their accelerators' vertex classes, numbered by their smallest rank
  std::unordered_map<std::uint32_t, std::uint32_t> class_of_vertex_class;
  l.class_of.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t vc = tc.vertex[static_cast<std::size_t>(t.accelerator_vertex(o.accelerator_of[r]))];
    auto [it, fresh] = class_of_vertex_class.try_emplace(vc, static_cast<std::uint32_t>(l.representative.size()));
    if (fresh) l.representative.push_back(static_cast<std::uint32_t>(r));
    l.class_of[r] = it->second;
  }
  const std::size_t classes = l.representative.size();
  std::vector<std::uint64_t> class_size(classes, 0);
  for (const std::uint32_t c : l.class_of)
    ++class_size[c];

  // the representatives' messages, by class: routed one receiver at a time from every representative
  std::vector<Template> templates;
  std::unordered_map<std::uint64_t, std::uint32_t> template_of;
  std::vector<int> sources;
  std::vector<std::uint32_t> source_class;
  std::vector<std::uint32_t> counted;  // scratch: links of each resource class on a route
  std::vector<std::uint32_t> seen;
  counted.assign(tc.resource_classes, 0);
  for (std::size_t d = 0; d < n; ++d) {
    sources.clear();
    source_class.clear();
    for (std::uint32_t c = 0; c < classes; ++c) {
      if (l.representative[c] == d) continue;
      sources.push_back(o.accelerator_of[l.representative[c]]);
      source_class.push_back(c);
    }
    if (sources.empty()) continue;
    const int destination = o.accelerator_of[d];
    const std::uint32_t dst_class = l.class_of[d];
    std::size_t visited = 0;
    // (the representatives are on distinct accelerators: a class is its accelerator's vertex class)
    t.routes_to(destination, sources, [&](int source, const std::vector<RouteHop>& hops) {
      ++visited;
      std::uint64_t on_route = 0;
      double latency_s = 0, narrowest_Bps = infinity;
      RouteGap gap;
      seen.clear();
      for (const RouteHop& hop : hops) {
        const std::size_t e = 2 * static_cast<std::size_t>(hop.link) + (hop.a_to_b ? 0 : 1);
        const std::uint32_t rc = tc.resource[e];
        on_route += mix(rc + 1);
        if (counted[rc]++ == 0) seen.push_back(rc);
        const TopologyLink& link = t.links()[static_cast<std::size_t>(hop.link)];
        latency_s += link.spec.latency_s;
        narrowest_Bps = std::min(narrowest_Bps, link.spec.bandwidth_Bps);
        gap.add(link);
      }
      for (std::size_t k = 0; k < sources.size(); ++k) {
        if (sources[k] != source) continue;
        const std::uint32_t src_class = source_class[k];
        std::uint64_t key = combine(combine(src_class, dst_class), on_route);
        key = combine(combine(key, bits_of(latency_s)), combine(bits_of(narrowest_Bps), bits_of(gap.value())));
        auto [it, fresh] = template_of.try_emplace(key, static_cast<std::uint32_t>(templates.size()));
        if (fresh) {
          Template tp;
          tp.src_class = src_class;
          tp.dst_class = dst_class;
          for (const std::uint32_t rc : seen)
            tp.link_classes.emplace_back(rc, counted[rc]);
          std::sort(tp.link_classes.begin(), tp.link_classes.end());
          tp.latency_s = latency_s;
          tp.narrowest_Bps = narrowest_Bps;
          tp.gap_s = gap.value();
          tp.hop = hop_class(o, static_cast<int>(l.representative[src_class]), static_cast<int>(d));
          templates.push_back(std::move(tp));
        }
        ++templates[it->second].from_representative;
      }
      for (const std::uint32_t rc : seen)
        counted[rc] = 0;
    });
    if (visited != sources.size()) {
      throw std::invalid_argument("all-pairs lumping: no route to position " + std::to_string(d));
    }
  }

  // the flows of every step: one per message class, loading each link class by its mean
  l.capacity_Bps.assign(tc.resource_classes, 0);
  for (std::size_t e = 0; e < tc.resource.size(); ++e)
    l.capacity_Bps[tc.resource[e]] = t.links()[e / 2].spec.bandwidth_Bps;
  l.library.push_back(library);
  l.first_step.assign(1, std::vector<std::uint32_t>(classes + 1, 0));
  const bool gaps = has_message_gaps(t);
  const auto p = static_cast<std::uint64_t>(pairs.ranks);
  for (std::size_t step = 0; step < pairs.steps.size(); ++step) {
    for (const Template& tp : templates) {
      LumpedFlow f;
      f.src_class = tp.src_class;
      f.src_step = static_cast<std::uint32_t>(step);
      f.dst_class = tp.dst_class;
      f.dst_step = static_cast<std::uint32_t>(step);
      f.bytes = largest;
      f.members = tp.from_representative * class_size[tp.src_class];
      f.first_hop = static_cast<std::uint32_t>(l.hops.size());
      f.hop_count = static_cast<std::uint32_t>(tp.link_classes.size());
      f.latency_s = tp.latency_s;
      f.narrowest_Bps = tp.narrowest_Bps;
      f.hop = tp.hop;
      for (const auto& [rc, count] : tp.link_classes) {
        l.hops.push_back({rc, static_cast<double>(f.members) * count / static_cast<double>(resource_class_size[rc])});
      }
      l.flows.push_back(f);
    }
  }
  // the representatives' steps: in step s, every message class it sends or receives, its gaps and reductions
  for (std::uint32_t c = 0; c < classes; ++c) {
    l.first_step[0][c] = static_cast<std::uint32_t>(l.steps.size());
    for (std::size_t step = 0; step < pairs.steps.size(); ++step) {
      const auto base = static_cast<std::uint32_t>(step * templates.size());
      LumpedStep st;
      st.first = static_cast<std::uint32_t>(l.step_flows.size());
      StepGaps step_gaps;
      for (std::uint32_t k = 0; k < templates.size(); ++k) {
        const Template& tp = templates[k];
        if (tp.src_class == c) {
          l.step_flows.push_back((base + k) * 2);
          if (gaps) {
            for (std::uint64_t m = 0; m < tp.from_representative; ++m)
              step_gaps.add_send(tp.gap_s);
          }
        }
        if (tp.dst_class == c) {
          l.step_flows.push_back((base + k) * 2 + 1);
          if (gaps) {  // (its share of the class's incoming messages: exact where the classes are)
            const double received = static_cast<double>(tp.from_representative * class_size[tp.src_class]) /
                                    static_cast<double>(class_size[c]);
            for (std::uint64_t m = 0; m < static_cast<std::uint64_t>(std::llround(received)); ++m)
              step_gaps.add_recv(tp.gap_s);
          }
        }
      }
      st.count = static_cast<std::uint32_t>(l.step_flows.size()) - st.first;
      st.gap_s = step_gaps.seconds();
      if (pairs.steps[step].receive == OpKind::recv_reduce) st.reduce_bytes = (p - 1) * largest;
      l.steps.push_back(st);
    }
  }
  l.first_step[0][classes] = static_cast<std::uint32_t>(l.steps.size());
  l.messages = pairs.messages();
  l.bytes_sent = pairs.bytes_sent();
  return l;
}

}  // namespace dtsim::lumping
