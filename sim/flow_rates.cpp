// Link sharing: each moving flow's rate by weighted max-min fairness, recomputed for the flows a change touches.
#include "sim/flow_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace dtsim::flow_engine {

void FlowEngine::compute_rates() {
  while (true) {
    comp_flows_.clear();
    comp_res_.clear();
    boundary_.clear();
    for (const std::uint32_t id : seeds_)
      add_to_component(id);
    for (std::size_t i = 0; i < dirty_.size(); ++i) {  // dirty_ grows as the component is explored
      const std::uint32_t res = dirty_[i];
      comp_res_.push_back(res);
      for (const OnResource& on : on_resource_[res])
        add_to_component(on.flow);
    }
    // most flows, each on a route of its own (a server's incast): visit them in memory order; where routes carry
    // several flows each (an NVLS tree's chunks), the groups are visited instead and the discovery order is kept
    if (comp_flows_.size() * 4 > flows_.size() && groups_.size() * 2 > comp_flows_.size()) {
      comp_flows_.clear();
      for (std::uint32_t id = 0; id < flows_.size(); ++id) {
        if (flow_mark_[id] == 1) comp_flows_.push_back(id);
      }
    }
    for (const std::uint32_t res : comp_res_) {
      Resource& r = res_[res];
      r.left = r.capacity;
      r.weight = 0;
      r.unfrozen = 0;
    }
    for (const std::uint32_t res : boundary_)
      res_[res].left = res_[res].capacity - res_[res].load;
    for (const RateGroup& g : groups_) {  // (a group's flows cross the same links alike)
      const double weight = static_cast<double>(g.members) / g.penalty;
      for (const std::uint32_t res : resources(g)) {
        Resource& r = res_[res];
        if (r.mark == 2) {
          r.left += g.rate_sum * g.cost;  // its load without the flows inside
        } else {
          r.unfrozen += g.members;
          r.weight += weight;
        }
      }
    }
    fill();
    bool exact = true;
    for (const std::uint32_t res : boundary_) {
      Resource& r = res_[res];
      if (r.left <= 1e-9 * r.capacity) {  // the new rates fill or overload a boundary link
        r.mark = 0;
        mark_dirty(res);
        exact = false;
      }
    }
    if (exact) break;
    for (const std::uint32_t res : boundary_) {  // start over from the links inside and those that filled up
      if (res_[res].mark == 2) res_[res].mark = 0;
    }
    for (const std::uint32_t id : comp_flows_)
      flow_mark_[id] = 0;
    clear_groups();
  }
  dirty_.clear();
  seeds_.clear();
  for (const std::uint32_t id : comp_flows_) {
    flow_mark_[id] = 0;
    set_rate(id, groups_[group_of_[id]].next_rate);
  }
  clear_groups();
  for (const std::uint32_t res : comp_res_)
    res_[res].mark = 0;
  for (const std::uint32_t res : boundary_)
    res_[res].mark = 0;
}

void FlowEngine::clear_groups() {
  groups_.clear();
  if (++group_epoch_ == 0) {  // (after 2^32 computations: forget the stamps for good)
    std::fill(route_group_.begin(), route_group_.end(), RouteGroup{});
    group_epoch_ = 1;
  }
}

inline void FlowEngine::add_to_component(std::uint32_t id) {
  if (flow_mark_[id] != 0) return;
  flow_mark_[id] = 1;
  comp_flows_.push_back(id);
  // its group: the flows of its route with its cost, penalty and bound (max-min gives them one rate)
  const Flow& f = flows_[id];
  RouteGroup& stamp = route_group_[f.first_resource];
  if (stamp.epoch != group_epoch_) {
    stamp.epoch = group_epoch_;
    stamp.first = none;
  }
  std::uint32_t& first = stamp.first;
  bool route_seen = false;  // (an empty route and the next one start at the same resource: told apart by count)
  std::uint32_t g = first;
  while (g != none) {
    const RateGroup& h = groups_[g];
    if (h.resource_count == f.resource_count) {
      route_seen = true;
      if (h.cost == f.cost && h.penalty == f.penalty && h.bound == f.bound) break;
    }
    g = h.next_of_route;
  }
  if (g == none) {
    g = static_cast<std::uint32_t>(groups_.size());
    RateGroup& group = groups_.emplace_back();
    group.first_resource = f.first_resource;
    group.resource_count = f.resource_count;
    group.next_of_route = first;
    group.cost = f.cost;
    group.penalty = f.penalty;
    group.bound = f.bound;
    first = g;
  }
  ++groups_[g].members;
  groups_[g].rate_sum += f.rate;
  group_of_[id] = g;
  if (route_seen) return;  // (its links were met with the route's first flow)
  for (const std::uint32_t res : resources(f)) {
    Resource& r = res_[res];
    if (r.mark != 0) continue;
    if (saturated(r) || r.load == 0) {  // (an idle link carries only flows that start now: no one outside)
      mark_dirty(res);
    } else {
      r.mark = 2;
      boundary_.push_back(res);
    }
  }
}

inline void FlowEngine::fill() {
  std::size_t unfrozen = groups_.size();
  std::size_t unfrozen_flows = comp_flows_.size();
  bounded_.clear();
  for (std::uint32_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].bound < infinity) bounded_.push_back(g);
  }
  auto bound_level = [&](std::uint32_t g) { return groups_[g].bound * groups_[g].penalty * groups_[g].cost; };
  std::sort(bounded_.begin(), bounded_.end(),
            [&](std::uint32_t a, std::uint32_t b) { return bound_level(a) < bound_level(b); });
  std::size_t next_bounded = 0;
  // What is still unfrozen, kept compact: the links with unfrozen flows (scanned for each level) and the groups
  // (scanned when a level freezes many), each list rid of what froze before it is read again, in its order, so that
  // a component whose levels freeze it a slice at a time (the flows of a switch's reduction on every node) costs
  // the unfrozen part per level instead of the whole component.
  open_res_.assign(comp_res_.begin(), comp_res_.end());
  open_groups_.resize(groups_.size());
  for (std::uint32_t g = 0; g < groups_.size(); ++g)
    open_groups_[g] = g;
  auto freeze = [&](std::uint32_t g, double level) {
    RateGroup& group = groups_[g];
    group.frozen = true;
    --unfrozen;
    unfrozen_flows -= group.members;
    group.next_rate = level / (group.penalty * group.cost);
    const double members = static_cast<double>(group.members);
    const double load = members * group.next_rate * group.cost;
    const double weight = members / group.penalty;
    for (const std::uint32_t res : resources(group)) {
      Resource& r = res_[res];
      r.left -= load;
      if (r.mark == 1) {
        r.weight -= weight;
        r.unfrozen -= group.members;
      }
    }
  };
  auto share = [&](const Resource& r) { return std::max(0.0, r.left) / r.weight; };
  while (unfrozen > 0) {
    double level = infinity;
    std::size_t kept = 0;
    for (const std::uint32_t res : open_res_) {
      if (res_[res].unfrozen == 0) continue;
      open_res_[kept++] = res;
      level = std::min(level, share(res_[res]));
    }
    open_res_.resize(kept);
    while (next_bounded < bounded_.size() && groups_[bounded_[next_bounded]].frozen)
      ++next_bounded;
    const double by_bound = next_bounded < bounded_.size() ? bound_level(bounded_[next_bounded]) : infinity;
    if (level == infinity && by_bound == infinity) {  // flows on boundary links only: unlimited, until checked
      for (const std::uint32_t g : open_groups_) {
        if (!groups_[g].frozen) freeze(g, infinity);
      }
      break;
    }
    const double close = std::min(level, by_bound) * (1 + 1e-12);
    if (by_bound <= level) {
      for (std::size_t i = next_bounded; i < bounded_.size() && bound_level(bounded_[i]) <= close; ++i) {
        if (!groups_[bounded_[i]].frozen) freeze(bounded_[i], by_bound);
      }
      continue;
    }
    filled_.clear();
    std::size_t filled_flows = 0;
    for (const std::uint32_t res : open_res_) {
      Resource& r = res_[res];
      if (share(r) <= close) {
        filled_.push_back(res);
        filled_flows += r.unfrozen;
        r.filled = true;
      }
    }
    if (filled_flows * 8 < unfrozen_flows) {  // a few flows freeze: read them from their links' lists
      for (const std::uint32_t res : filled_) {
        for (const OnResource& on : on_resource_[res]) {
          const std::uint32_t g = group_of_[on.flow];
          if (!groups_[g].frozen) freeze(g, level);
        }
      }
    } else {  // many (a server's incast): read the unfrozen groups in order rather than jump around
      kept = 0;
      for (const std::uint32_t g : open_groups_) {
        if (groups_[g].frozen) continue;
        const auto route = resources(groups_[g]);
        if (std::any_of(route.begin(), route.end(), [&](std::uint32_t res) { return res_[res].filled; })) {
          freeze(g, level);
        } else {
          open_groups_[kept++] = g;
        }
      }
      open_groups_.resize(kept);
    }
    for (const std::uint32_t res : filled_)
      res_[res].filled = false;
  }
}

void FlowEngine::set_rate(std::uint32_t id, double rate) {
  Flow& f = flows_[id];
  if (rate == f.rate) return;
  for (const std::uint32_t res : resources(f))
    res_[res].load += (rate - f.rate) * f.cost;
  f.remaining = std::max(0.0, f.remaining - f.rate * (now_ - f.updated_at));
  f.updated_at = now_;
  f.rate = rate;
  if (rate > 0) {
    finishing_.set(id, now_ + f.remaining / rate);
  } else {
    finishing_.erase(id);
  }
}

}  // namespace dtsim::flow_engine
