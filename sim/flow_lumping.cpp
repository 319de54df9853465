#include "sim/flow_lumping.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "algorithms/transfer_matching.hpp"
#include "sim/engine_constants.hpp"
#include "sim/lumping_keys.hpp"
#include "sim/open_index.hpp"
#include "sim/topology.hpp"

namespace dtsim::lumping {
namespace {

using engine::infinity;
using engine::none;

// Segments of one shape (the same ops, peers and spans; buckets of one allreduce at other sizes): their messages are
// matched and routed once.
struct Group {
  std::vector<std::size_t> segments;
  std::vector<std::uint64_t> span_key;  // by span: its timed bytes in every segment of the group, hashed
  MatchedTransfers t;                   // the messages: sender, receiver, their steps, the span (by receiver)
  // by message: the route's three pieces (Finder::pieces_), and what does not change in refinement (the group,
  // steps, timed bytes, the route's latency and narrowest link) hashed
  std::array<std::vector<std::uint32_t>, 3> piece;
  std::vector<std::uint64_t> fixed_key;
  // A compact shape's repeated steps: rank r's steps are [step_first[r], step_first[r + 1]) of step_repeat, each the
  // index of its StepRepeat in the schedule (none: runs once). Empty for a shape without repeats.
  std::vector<std::uint64_t> step_first;
  std::vector<std::uint32_t> step_repeat;
  std::uint32_t repeat_index(std::uint32_t rank, std::uint32_t step) const {
    return step_first.empty() ? none : step_repeat[step_first[rank] + step];
  }
};

// Fills a group's step_repeat for a compact schedule (see Group).
void index_repeats(const Schedule& s, Group& g) {
  const auto n = static_cast<std::size_t>(s.ranks);
  g.step_first.assign(n + 1, 0);
  g.step_repeat.clear();
  std::size_t next = 0;
  for (std::size_t r = 0; r < n; ++r) {
    g.step_first[r] = g.step_repeat.size();
    for (std::uint64_t i = s.rank_begin[r]; i < s.rank_begin[r + 1]; ++i) {
      if (i != s.rank_begin[r] && !s.ops[i].starts_step()) continue;
      while (next < s.repeats.size() && s.repeats[next].op < i)
        ++next;
      g.step_repeat.push_back(next < s.repeats.size() && s.repeats[next].op == i ? static_cast<std::uint32_t>(next)
                                                                                 : none);
    }
  }
  g.step_first[n] = g.step_repeat.size();
}

// Whether matching the stored steps of a compact schedule (each repeated step once) matches as the expanded schedule
// does: a transfer's two steps repeat equally often, and on each channel the transfers of one repeated step meet
// those of one repeated step (so repetition k meets repetition k).
bool repeats_match(const Schedule& s, const Group& g) {
  const MatchedTransfers& t = g.t;
  auto count = [&](std::uint32_t index) { return index == none ? 0U : s.repeats[index].count; };
  for (std::size_t d = 0; d + 1 < t.first_into.size(); ++d) {
    bool previous_repeats = false;
    for (std::uint64_t k = t.first_into[d]; k < t.first_into[d + 1]; ++k) {
      const std::uint32_t at_src = g.repeat_index(t.src[k], t.src_step[k]);
      const std::uint32_t at_dst = g.repeat_index(t.dst[k], t.dst_step[k]);
      if (count(at_src) != count(at_dst)) return false;
      const bool repeats = at_src != none || at_dst != none;
      if (k > t.first_into[d] && t.src[k] == t.src[k - 1] && (repeats || previous_repeats) &&
          (t.src_step[k] == t.src_step[k - 1]) != (t.dst_step[k] == t.dst_step[k - 1])) {
        return false;
      }
      previous_repeats = repeats;
    }
  }
  return true;
}

// A compact schedule is lumped only when every chunk is timed at one size, so that each repetition of a step (its
// chunks rotated) takes what the first takes.
bool chunks_timed_alike(const Schedule& s, std::span<const std::uint64_t> timed) {
  for (std::size_t c = 1; c < s.chunks.size(); ++c) {
    if (timed[c] != timed[0]) return false;
  }
  return true;
}

std::vector<std::uint64_t> timed_bytes_by_span(const Schedule& s, const FlowOptions& o) {
  const std::uint64_t padded = padded_chunk_bytes(s, o);
  std::vector<std::uint64_t> bytes(s.spans.size());
  for (std::uint32_t i = 0; i < s.spans.size(); ++i)
    bytes[i] = timed_span_bytes(s, i, padded);
  return bytes;
}

bool same_shape(const Schedule& a, const Schedule& b) {
  if (&a == &b) return true;
  if (a.ranks != b.ranks || a.rank_begin != b.rank_begin || a.ops != b.ops || a.compute_flops != b.compute_flops ||
      a.repeats != b.repeats || a.spans.size() != b.spans.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.spans.size(); ++i) {
    if (a.spans[i].first_chunk != b.spans[i].first_chunk || a.spans[i].chunk_count != b.spans[i].chunk_count) {
      return false;
    }
  }
  return true;
}

class Finder {
public:
  struct LumpingFailed {};

  Finder(int ranks, std::span<const Schedule* const> segments, const FlowOptions& o, const UnitHints& hints)
      : o_(o),
        segments_(segments),
        n_(static_cast<std::size_t>(ranks)),
        has_gaps_(has_message_gaps(*o.topology)),
        hints_(hints) {}

  std::optional<Lumping> find(std::size_t max_classes) {
    for (const Schedule* s : segments_) {
      timed_.push_back(timed_bytes_by_span(*s, o_));
      if (s->compact() && !chunks_timed_alike(*s, timed_.back())) return std::nullopt;
    }
    make_groups();
    resources_ = 2 * o_.topology->links().size();
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      // unmatched transfers: the full executor reports the deadlock
      const Schedule& shape = *segments_[groups_[gi].segments.front()];
      std::optional<MatchedTransfers> matched = match_transfers(shape);
      if (!matched) return std::nullopt;
      groups_[gi].t = std::move(*matched);
      if (shape.compact()) {
        index_repeats(shape, groups_[gi]);
        if (!repeats_match(shape, groups_[gi])) return std::nullopt;
      }
      route_messages(groups_[gi], gi);
    }
    static_rank_keys();
    if (!refine(max_classes)) return std::nullopt;
    return build();
  }

private:
  void make_groups() {
    for (std::size_t i = 0; i < segments_.size(); ++i) {
      Group* into = nullptr;
      for (Group& g : groups_) {
        if (same_shape(*segments_[g.segments.front()], *segments_[i])) into = &g;
      }
      if (into == nullptr) into = &groups_.emplace_back();
      into->segments.push_back(i);
    }
    for (Group& g : groups_) {
      const Schedule& s = *segments_[g.segments.front()];
      g.span_key.assign(s.spans.size(), 0);
      for (std::uint32_t span = 0; span < s.spans.size(); ++span) {
        for (const std::size_t seg : g.segments)
          g.span_key[span] = combine(g.span_key[span], timed_[seg][span]);
      }
    }
  }

  // A route is stored as three interned pieces: the links inside the sender's node, those of the fabric, those inside
  // the receiver's node (on the star: the sender's uplink, nothing, the receiver's downlink). The routes from one GPU
  // share their first piece, those into one GPU their last, those between two leaves their middle one; so millions
  // of routes are a few thousand pieces, found mostly by comparing with the piece used last, and refinement reads
  // three sums per message.
  std::uint32_t intern_piece(const std::uint32_t* links, std::uint32_t count, std::uint32_t& last) {
    auto same = [&](std::uint32_t id) {
      const Piece& h = pieces_[id];
      return h.count == count && std::equal(links, links + count, piece_links_.begin() + h.first);
    };
    if (last != none && same(last)) return last;
    std::uint64_t hash = count;
    for (std::uint32_t k = 0; k < count; ++k)
      hash = (hash + links[k]) * 0x9E3779B97F4A7C15ULL;
    last = piece_index_.find(hash, same);
    if (last != none) return last;
    last = static_cast<std::uint32_t>(pieces_.size());
    pieces_.push_back({static_cast<std::uint32_t>(piece_links_.size()), count});
    piece_links_.insert(piece_links_.end(), links, links + count);
    piece_index_.insert(hash, last);
    return last;
  }

  std::span<const std::uint32_t> piece(std::uint32_t id) const {
    return {piece_links_.data() + pieces_[id].first, pieces_[id].count};
  }

  struct RouteInfo {
    std::array<std::uint32_t, 3> piece{none, none, none};
    std::uint64_t key = 0;  // latency and narrowest link
  };

  // A route's latency (every hop's) and narrowest link.
  struct RouteFigures {
    double latency_s = 0;
    double narrowest_Bps = infinity;
    double gap_s = 0;  // per-message gap (route_gap_s)
  };
  RouteFigures figures(std::span<const std::span<const std::uint32_t>> parts) const {
    RouteFigures f;
    RouteGap gap;
    for (const auto& part : parts) {
      for (const std::uint32_t e : part) {
        const LinkSpec& link = o_.topology->links()[e / 2].spec;
        f.latency_s += link.latency_s;
        f.narrowest_Bps = std::min(f.narrowest_Bps, link.bandwidth_Bps);
        gap.add(o_.topology->links()[e / 2]);
      }
    }
    f.gap_s = gap.value();
    return f;
  }

  void route_messages(Group& g, std::size_t gi) {
    const std::size_t m = g.t.src.size();
    for (auto& p : g.piece)
      p.resize(m);
    g.fixed_key.resize(m);
    // by sender's place (its endpoint): its route to the receiver
    const std::size_t places = static_cast<std::size_t>(o_.topology->endpoints());
    std::vector<RouteInfo> route_from(places);
    std::vector<int> sources;
    std::vector<std::uint32_t> links;
    std::vector<std::uint32_t> last_first(places, none);  // by sender's place: its first piece last time
    std::uint32_t last_middle = none, last_last = none;
    auto place = [&](std::uint32_t position) { return static_cast<std::uint32_t>(o_.accelerator_of[position]); };
    auto store = [&](std::uint32_t src, std::uint32_t inside_src, std::uint32_t inside_dst) {
      RouteInfo& r = route_from[src];
      const auto count = static_cast<std::uint32_t>(links.size());
      r.piece[0] = intern_piece(links.data(), inside_src, last_first[src]);
      r.piece[1] = intern_piece(links.data() + inside_src, count - inside_src - inside_dst, last_middle);
      r.piece[2] = intern_piece(links.data() + count - inside_dst, inside_dst, last_last);
      const std::span<const std::uint32_t> whole[] = {links};
      const RouteFigures f = figures(whole);
      r.key = combine(combine(bits_of(f.latency_s), bits_of(f.narrowest_Bps)), bits_of(f.gap_s));
    };
    for (std::uint32_t dst = 0; dst < n_; ++dst) {
      const std::uint64_t begin = g.t.first_into[dst], end = g.t.first_into[dst + 1];
      sources.clear();
      for (std::uint64_t k = begin; k < end; ++k) {
        if (k == begin || g.t.src[k] != g.t.src[k - 1]) sources.push_back(static_cast<int>(place(g.t.src[k])));
      }
      std::sort(sources.begin(), sources.end());  // (units on one accelerator share its routes)
      sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
      last_last = none;
      if (!sources.empty()) {
        const Topology& t = *o_.topology;
        auto link_class = [&](const RouteHop& hop) { return t.links()[static_cast<std::size_t>(hop.link)].link_class; };
        auto inside_node = [&](const RouteHop& hop) {
          return link_class(hop) != LinkClass::fabric && link_class(hop) != LinkClass::global;
        };
        t.routes_to(o_.accelerator_of[dst], sources, [&](int source, const std::vector<RouteHop>& hops) {
          links.clear();
          for (const RouteHop& hop : hops)
            links.push_back(2 * static_cast<std::uint32_t>(hop.link) + (hop.a_to_b ? 0 : 1));
          // the sender's side: its node's links up to and with its NIC's; the receiver's likewise, from the end
          std::uint32_t inside_src = 0, inside_dst = 0;
          while (inside_src < hops.size() && inside_node(hops[inside_src]))
            if (link_class(hops[inside_src++]) == LinkClass::nic) break;
          while (inside_dst + inside_src < hops.size() && inside_node(hops[hops.size() - 1 - inside_dst]))
            if (link_class(hops[hops.size() - 1 - inside_dst++]) == LinkClass::nic) break;
          store(static_cast<std::uint32_t>(source), inside_src, inside_dst);
        });
      }
      for (std::uint64_t k = begin; k < end; ++k) {
        const RouteInfo& r = route_from[place(g.t.src[k])];
        if (r.piece[0] == none) throw LumpingFailed{};  // (a pair the topology did not route)
        for (std::size_t p = 0; p < 3; ++p)
          g.piece[p][k] = r.piece[p];
        std::uint64_t key = combine(gi, g.t.src_step[k]);
        key = combine(key, g.t.dst_step[k]);
        key = combine(key, g.span_key[g.t.span[k]]);
        g.fixed_key[k] = combine(key, r.key);
      }
      for (const int src : sources)
        route_from[static_cast<std::size_t>(src)] = RouteInfo{};
    }
  }

  double capacity(std::size_t resource) const { return o_.topology->links()[resource / 2].spec.bandwidth_Bps; }

  // What a rank does apart from its messages: per segment and step, the flops it computes and the bytes it reduces.
  void static_rank_keys() {
    rank_key_.assign(n_, 0);
    if (!hints_.unit_key.empty()) std::copy(hints_.unit_key.begin(), hints_.unit_key.end(), rank_key_.begin());
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& g = groups_[gi];
      const Schedule& s = *segments_[g.segments.front()];
      for (std::uint32_t r = 0; r < n_; ++r) {
        std::uint64_t key = combine(rank_key_[r], gi);
        std::uint64_t step_key = 0;
        std::uint32_t step = 0;
        bool first = true;
        for (const Op& op : s.rank_ops(static_cast<int>(r))) {
          if (first || op.starts_step()) {
            key = combine(key, step_key + 1);
            const std::uint32_t repeat = g.repeat_index(r, step++);
            step_key = repeat == none ? 0 : mix(s.repeats[repeat].count);
          }
          first = false;
          if (op.kind() == OpKind::compute) step_key = combine(step_key, bits_of(s.compute_flops[op.compute_index()]));
          if (op.kind() == OpKind::recv_reduce) step_key += mix(g.span_key[op.span()]);  // a sum: order-free
        }
        rank_key_[r] = combine(key, step_key + 1);
      }
    }
  }

  // A message's class, from the classes of its sender and receiver and the multiset of link classes on its route
  // (piece_sum_: per piece, the sum of its links' mixed classes).
  std::uint64_t message_key(const Group& g, std::size_t i) const {
    const std::uint64_t ends = (static_cast<std::uint64_t>(rank_class_[g.t.src[i]]) << 32) | rank_class_[g.t.dst[i]];
    const std::uint64_t on_route = piece_sum_[g.piece[0][i]] + piece_sum_[g.piece[1][i]] + piece_sum_[g.piece[2][i]];
    return mix(g.fixed_key[i] ^ mix(ends) ^ on_route);
  }

  void sum_pieces() {
    piece_sum_.assign(pieces_.size(), 0);
    for (std::size_t h = 0; h < pieces_.size(); ++h) {
      for (const std::uint32_t e : piece(static_cast<std::uint32_t>(h)))
        piece_sum_[h] += mix(link_class_[e] + 1);
    }
  }

  // Colour refinement to the coarsest equitable partition; false if it has more than max_classes rank classes. The
  // multisets of neighbours are compared by two sums (of mixed hashes and of their squares).
  bool refine(std::size_t max_classes) {
    std::vector<std::uint32_t> order;
    std::uint32_t rank_classes = dense_ids(rank_key_, rank_class_, order);
    std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> link_init(resources_);
    for (std::size_t e = 0; e < resources_; ++e) {
      const TopologyLink& link = o_.topology->links()[e / 2];
      link_init[e] = {bits_of(link.spec.bandwidth_Bps), bits_of(link.spec.latency_s),
                      static_cast<std::uint64_t>(link.link_class)};
    }
    std::uint32_t link_classes = dense_ids(link_init, link_class_, order);
    using Key = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>;
    std::vector<Key> rank_keys(n_);
    std::vector<Key> link_keys(resources_);
    std::vector<std::uint64_t> piece_a, piece_b, owner_sum;
    while (true) {
      sum_pieces();
      for (std::size_t r = 0; r < n_; ++r)
        rank_keys[r] = {rank_class_[r], 0, 0};
      if (!hints_.owner.empty()) {  // a unit's siblings (the units of its owner) in its neighbourhood
        owner_sum.assign(hints_.owners, 0);
        for (std::size_t r = 0; r < n_; ++r)
          owner_sum[hints_.owner[r]] += mix(rank_class_[r] + 0x5bd1e995ULL);
        for (std::size_t r = 0; r < n_; ++r) {
          const std::uint64_t siblings = mix(owner_sum[hints_.owner[r]] ^ 0x9e3779b97f4a7c15ULL);
          std::get<1>(rank_keys[r]) += siblings;
          std::get<2>(rank_keys[r]) += siblings * siblings;
        }
      }
      for (std::size_t e = 0; e < resources_; ++e)
        link_keys[e] = {link_class_[e], 0, 0};
      piece_a.assign(pieces_.size(), 0);
      piece_b.assign(pieces_.size(), 0);
      for (const Group& g : groups_) {
        for (std::size_t i = 0; i < g.t.src.size(); ++i) {
          const std::uint64_t key = message_key(g, i);
          const std::uint64_t as_sender = mix(key + 1), as_receiver = mix(key + 2), on_link = mix(key + 3);
          Key& src = rank_keys[g.t.src[i]];
          std::get<1>(src) += as_sender;
          std::get<2>(src) += as_sender * as_sender;
          Key& dst = rank_keys[g.t.dst[i]];
          std::get<1>(dst) += as_receiver;
          std::get<2>(dst) += as_receiver * as_receiver;
          const std::uint64_t square = on_link * on_link;
          for (std::size_t p = 0; p < 3; ++p) {
            piece_a[g.piece[p][i]] += on_link;
            piece_b[g.piece[p][i]] += square;
          }
        }
      }
      for (std::size_t h = 0; h < pieces_.size(); ++h) {
        for (const std::uint32_t e : piece(static_cast<std::uint32_t>(h))) {
          std::get<1>(link_keys[e]) += piece_a[h];
          std::get<2>(link_keys[e]) += piece_b[h];
        }
      }
      const std::uint32_t new_ranks = dense_ids(rank_keys, rank_class_, order);
      const std::uint32_t new_links = dense_ids(link_keys, link_class_, order);
      if (new_ranks > max_classes) return false;
      if (new_ranks == rank_classes && new_links == link_classes) {
        sum_pieces();
        return true;
      }
      rank_classes = new_ranks;
      link_classes = new_links;
    }
  }

  Lumping build() {
    Lumping l;
    // classes numbered by their smallest rank
    std::vector<std::uint32_t> renumber(n_, none);
    l.class_of.resize(n_);
    for (std::uint32_t r = 0; r < n_; ++r) {
      std::uint32_t& c = renumber[rank_class_[r]];
      if (c == none) {
        c = static_cast<std::uint32_t>(l.representative.size());
        l.representative.push_back(r);
      }
      l.class_of[r] = c;
    }
    const std::size_t classes = l.representative.size();
    std::vector<std::uint64_t> class_size(classes, 0);
    for (const std::uint32_t c : l.class_of)
      ++class_size[c];
    std::uint32_t link_classes = 0;
    for (const std::uint32_t d : link_class_)
      link_classes = std::max(link_classes, d + 1);
    std::vector<std::uint64_t> link_class_size(link_classes, 0);
    l.capacity_Bps.assign(link_classes, 0);
    for (std::size_t e = 0; e < resources_; ++e) {
      ++link_class_size[link_class_[e]];
      l.capacity_Bps[link_class_[e]] = capacity(e);
    }
    l.first_step.resize(segments_.size());
    for (const Schedule* s : segments_)
      l.library.push_back(segment_library_cost(o_, *s));
    struct Entry {
      std::uint32_t cls, step, flow_side;
      bool operator<(const Entry& o) const {
        return std::tie(cls, step, flow_side) < std::tie(o.cls, o.step, o.flow_side);
      }
      bool operator==(const Entry& o) const = default;
    };
    struct PerSegmentSteps {
      std::vector<LumpedStep> steps;
      std::vector<std::uint32_t> flows;
    };
    std::vector<PerSegmentSteps> per_segment(segments_.size());
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& g = groups_[gi];
      const Schedule& shape = *segments_[g.segments.front()];
      // message classes of the shape
      struct Template {
        std::uint32_t src_class, src_step, dst_class, dst_step, span;
        std::array<std::uint32_t, 3> pieces;
        std::uint64_t members = 0;
        HopClass hop = HopClass::net;  // (its routes' pieces tell nodes and interconnects apart: one class for all)
      };
      std::vector<Template> templates;
      std::unordered_map<std::uint64_t, std::uint32_t> template_of;
      std::vector<Entry> entries;
      std::vector<std::uint64_t> sends_of_span(shape.spans.size(), 0);
      std::vector<double> template_gap;                     // by template: its route's per-message gap
      std::unordered_map<std::uint64_t, StepGaps> gaps_of;  // (class << 32 | step) -> its representative's gaps
      auto step_key = [](std::uint32_t cls, std::uint32_t step) {
        return static_cast<std::uint64_t>(cls) << 32 | step;
      };
      std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> repeated_sends;  // (span, StepRepeat): how many
      for (std::size_t i = 0; i < g.t.src.size(); ++i) {
        if (const std::uint32_t repeat = g.repeat_index(g.t.src[i], g.t.src_step[i]); repeat != none) {
          ++repeated_sends[{g.t.span[i], repeat}];
        } else {
          ++sends_of_span[g.t.span[i]];
        }
        const std::uint64_t key = message_key(g, i);
        auto [it, fresh] = template_of.try_emplace(key, static_cast<std::uint32_t>(templates.size()));
        if (fresh) {
          templates.push_back({l.class_of[g.t.src[i]],
                               g.t.src_step[i],
                               l.class_of[g.t.dst[i]],
                               g.t.dst_step[i],
                               g.t.span[i],
                               {g.piece[0][i], g.piece[1][i], g.piece[2][i]},
                               0,
                               hop_class(o_, static_cast<int>(g.t.src[i]), static_cast<int>(g.t.dst[i]))});
          if (has_gaps_) {
            const std::span<const std::uint32_t> parts[] = {piece(g.piece[0][i]), piece(g.piece[1][i]),
                                                            piece(g.piece[2][i])};
            template_gap.push_back(figures(parts).gap_s);
          }
        }
        Template& t = templates[it->second];
        ++t.members;
        if (l.representative[l.class_of[g.t.src[i]]] == g.t.src[i]) {
          entries.push_back({l.class_of[g.t.src[i]], g.t.src_step[i], it->second * 2});
          if (has_gaps_) gaps_of[step_key(l.class_of[g.t.src[i]], g.t.src_step[i])].add_send(template_gap[it->second]);
        }
        if (l.representative[l.class_of[g.t.dst[i]]] == g.t.dst[i]) {
          entries.push_back({l.class_of[g.t.dst[i]], g.t.dst_step[i], it->second * 2 + 1});
          if (has_gaps_) gaps_of[step_key(l.class_of[g.t.dst[i]], g.t.dst_step[i])].add_recv(template_gap[it->second]);
        }
      }
      std::sort(entries.begin(), entries.end());
      entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
      // the links each class loads: members x (links of the class on one member's route) / links in the class
      std::vector<std::pair<std::uint32_t, double>> template_hops;
      std::vector<std::uint32_t> template_first(templates.size() + 1, 0);
      std::vector<std::uint32_t> count_of(link_classes, 0);
      for (std::size_t t = 0; t < templates.size(); ++t) {
        std::vector<std::uint32_t> seen;
        for (const std::uint32_t h : templates[t].pieces) {
          for (const std::uint32_t e : piece(h)) {
            const std::uint32_t d = link_class_[e];
            if (count_of[d]++ == 0) seen.push_back(d);
          }
        }
        for (const std::uint32_t d : seen) {
          const std::uint64_t total = templates[t].members * count_of[d];
          if (total % link_class_size[d] != 0) throw LumpingFailed{};  // not equitable after all: a hash collision
          template_hops.emplace_back(d, static_cast<double>(total / link_class_size[d]));
          count_of[d] = 0;
        }
        template_first[t + 1] = static_cast<std::uint32_t>(template_hops.size());
      }
      for (const Template& t : templates) {
        if (t.members % class_size[t.src_class] != 0 || t.members % class_size[t.dst_class] != 0) {
          throw LumpingFailed{};
        }
      }
      for (const std::size_t seg : g.segments) {
        const auto base = static_cast<std::uint32_t>(l.flows.size());
        for (std::size_t t = 0; t < templates.size(); ++t) {
          const Template& tp = templates[t];
          const std::span<const std::uint32_t> parts[] = {piece(tp.pieces[0]), piece(tp.pieces[1]),
                                                          piece(tp.pieces[2])};
          const RouteFigures route = figures(parts);
          LumpedFlow f;
          f.segment = static_cast<std::uint32_t>(seg);
          f.src_class = tp.src_class;
          f.src_step = tp.src_step;
          f.dst_class = tp.dst_class;
          f.dst_step = tp.dst_step;
          f.bytes = timed_[seg][tp.span];
          f.members = tp.members;
          f.first_hop = static_cast<std::uint32_t>(l.hops.size());
          f.hop_count = template_first[t + 1] - template_first[t];
          f.latency_s = route.latency_s;
          f.narrowest_Bps = route.narrowest_Bps;
          f.hop = tp.hop;
          for (std::uint32_t h = template_first[t]; h < template_first[t + 1]; ++h)
            l.hops.push_back({template_hops[h].first, template_hops[h].second});
          l.flows.push_back(f);
        }
        const Schedule& s = *segments_[seg];
        for (std::uint32_t span = 0; span < s.spans.size(); ++span) {
          l.messages += sends_of_span[span];
          l.bytes_sent += sends_of_span[span] * s.span_bytes(span);
        }
        for (const auto& [at, sends] : repeated_sends) {  // every repetition, its chunk rotated
          const StepRepeat& r = s.repeats[at.second];
          l.messages += sends * (r.count + 1ULL);
          for (std::uint32_t k = 0; k <= r.count; ++k)
            l.bytes_sent += sends * s.span_bytes(r.shifted(at.first, k));
        }
        // the representatives' steps
        PerSegmentSteps& out = per_segment[seg];
        std::vector<std::uint32_t>& first = l.first_step[seg];
        first.assign(classes + 1, 0);
        std::size_t e = 0;
        for (std::uint32_t c = 0; c < classes; ++c) {
          first[c] = static_cast<std::uint32_t>(out.steps.size());
          std::uint32_t step = none;
          bool first_op = true;
          for (const Op& op : s.rank_ops(static_cast<int>(l.representative[c]))) {
            if (first_op || op.starts_step()) {
              ++step;
              out.steps.emplace_back();
              if (const auto found = gaps_of.find(step_key(c, step)); found != gaps_of.end()) {
                out.steps.back().gap_s = found->second.seconds();
              }
              out.steps.back().first = static_cast<std::uint32_t>(out.flows.size());
              while (e < entries.size() && entries[e].cls == c && entries[e].step == step) {
                out.flows.push_back(base * 2 + entries[e].flow_side);
                ++e;
              }
              out.steps.back().count = static_cast<std::uint32_t>(out.flows.size()) - out.steps.back().first;
              const std::uint32_t repeat = g.repeat_index(l.representative[c], step);
              out.steps.back().repeats = repeat == none ? 0 : s.repeats[repeat].count;
              out.steps.back().lockstep = repeat != none && s.repeats[repeat].lockstep;
            }
            first_op = false;
            if (op.kind() == OpKind::compute) out.steps.back().flops += s.compute_flops[op.compute_index()];
            if (op.kind() == OpKind::recv_reduce) out.steps.back().reduce_bytes += timed_[seg][op.span()];
          }
        }
        first[classes] = static_cast<std::uint32_t>(out.steps.size());
        if (e != entries.size()) throw LumpingFailed{};
      }
    }
    // one array of steps: segment after segment
    for (std::size_t seg = 0; seg < segments_.size(); ++seg) {
      const auto step_base = static_cast<std::uint32_t>(l.steps.size());
      const auto flow_base = static_cast<std::uint32_t>(l.step_flows.size());
      for (LumpedStep st : per_segment[seg].steps) {
        st.first += flow_base;
        l.steps.push_back(st);
      }
      l.step_flows.insert(l.step_flows.end(), per_segment[seg].flows.begin(), per_segment[seg].flows.end());
      for (std::uint32_t& f : l.first_step[seg])
        f += step_base;
    }
    return l;
  }

  const FlowOptions& o_;
  std::span<const Schedule* const> segments_;
  std::size_t n_;
  bool has_gaps_ = false;  // some route has a per-message gap
  std::size_t resources_ = 0;
  std::vector<std::vector<std::uint64_t>> timed_;  // by segment, by span
  std::vector<Group> groups_;
  struct Piece {
    std::uint32_t first = 0;  // into piece_links_
    std::uint32_t count = 0;
  };
  std::vector<Piece> pieces_;
  std::vector<std::uint32_t> piece_links_;
  OpenIndex piece_index_;                 // by hash of the piece's links
  std::vector<std::uint64_t> piece_sum_;  // by piece: the sum of its links' mixed classes
  UnitHints hints_;
  std::vector<std::uint64_t> rank_key_;
  std::vector<std::uint32_t> rank_class_;
  std::vector<std::uint32_t> link_class_;
};

}  // namespace

ChunkRange chunk_range(const Schedule& s) {
  ChunkRange range{std::numeric_limits<std::uint64_t>::max(), 0};
  for (const Chunk& c : s.chunks) {
    range.smallest = std::min(range.smallest, c.size_bytes);
    range.largest = std::max(range.largest, c.size_bytes);
  }
  return range;
}

std::uint64_t padded_bytes(std::uint64_t smallest, std::uint64_t largest, const FlowOptions& o) {
  if (smallest >= largest) return 0;
  const std::uint64_t difference = largest - smallest;
  const bool within_fraction =
      smallest > 0 && static_cast<double>(difference) <= o.pad_chunks_within * static_cast<double>(largest);
  return within_fraction || difference <= o.pad_chunks_bytes ? largest : 0;
}

std::uint64_t padded_chunk_bytes(const Schedule& s, const FlowOptions& o) {
  const auto [smallest, largest] = chunk_range(s);
  return padded_bytes(smallest, largest, o);
}

std::optional<Lumping> find_classes(int ranks, std::span<const Schedule* const> segments, const FlowOptions& options,
                                    std::size_t max_classes, const UnitHints& hints) {
  for (const Schedule* s : segments) {
    if (s->ranks != ranks) return std::nullopt;
  }
  if ((!hints.unit_key.empty() && hints.unit_key.size() != static_cast<std::size_t>(ranks)) ||
      (!hints.owner.empty() && hints.owner.size() != static_cast<std::size_t>(ranks))) {
    throw std::invalid_argument("find_classes: hints for " +
                                std::to_string(std::max(hints.owner.size(), hints.unit_key.size())) + " units, not " +
                                std::to_string(ranks));
  }
  try {
    return Finder(ranks, segments, options, hints).find(max_classes);
  } catch (const Finder::LumpingFailed&) {
    return std::nullopt;
  }
}

}  // namespace dtsim::lumping
