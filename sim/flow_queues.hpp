// The flow engine's event queues: events by instant, and moving flows by the instant they end.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/engine_constants.hpp"

namespace dtsim::flow_engine {

using engine::none;
using engine::tolerance;

enum class EventKind : std::uint8_t { latency_paid, flow_done, reduce_done, compute_done, release, recv_ready };

// An index into `items`: one from the free list, or a new element at the end.
template <typename T>
std::uint32_t reuse_or_append(std::vector<T>& items, std::vector<std::uint32_t>& free) {
  if (!free.empty()) {
    const std::uint32_t id = free.back();
    free.pop_back();
    return id;
  }
  items.emplace_back();
  return static_cast<std::uint32_t>(items.size() - 1);
}

struct Event {
  EventKind kind;
  std::uint32_t id;  // flow or rank
};

// Moving flows by the time they will end, grouped by instant: a min-heap of instants that knows where each instant
// sits, each with its flows, and each flow's place. A new rate moves the flow to another instant instead of leaving a
// stale event behind (a desynchronised butterfly changes rates millions of times), and the million flows of a server's
// incast that end together cost one heap entry (the last few instants used are looked up first).
class FinishQueue {
public:
  bool empty() const { return heap_.empty(); }
  double next_at() const { return instants_[heap_.front()].at; }
  // Appends the flows of the earliest instant to `out` as flow_done events and removes them.
  void pop(std::vector<Event>& out) {
    const std::uint32_t id = heap_.front();
    for (const std::uint32_t flow : instants_[id].flows) {
      out.push_back({EventKind::flow_done, flow});
      place_[flow].instant = none;
    }
    remove_instant(id);
  }
  // Flow `flow` ends at `at` (inserted, or moved if it was elsewhere).
  void set(std::uint32_t flow, double at) {
    if (flow >= place_.size()) place_.resize(flow + 1);
    const Place old = place_[flow];
    if (old.instant != none) {
      if (std::fabs(instants_[old.instant].at - at) <= tolerance(at)) return;
      erase(flow);
    }
    std::uint32_t id = none;
    for (const std::uint32_t r : recent_) {
      if (r != none && std::fabs(instants_[r].at - at) <= tolerance(at)) id = r;
    }
    if (id == none) id = add_instant(at);
    place_[flow] = {id, static_cast<std::uint32_t>(instants_[id].flows.size())};
    instants_[id].flows.push_back(flow);
  }
  void erase(std::uint32_t flow) {
    if (flow >= place_.size() || place_[flow].instant == none) return;
    const Place p = place_[flow];
    place_[flow].instant = none;
    std::vector<std::uint32_t>& flows = instants_[p.instant].flows;
    flows[p.index] = flows.back();
    place_[flows[p.index]].index = p.index;
    flows.pop_back();
    if (flows.empty()) remove_instant(p.instant);
  }
  // Every instant `by` seconds later (the order stays).
  void shift(double by) {
    for (const std::uint32_t id : heap_)
      instants_[id].at += by;
  }

private:
  struct Instant {
    double at = 0;
    std::uint32_t heap_index = none;
    std::vector<std::uint32_t> flows;
  };
  struct Place {
    std::uint32_t instant = none;
    std::uint32_t index = 0;  // in the instant's flows
  };
  std::uint32_t add_instant(double at) {
    const std::uint32_t id = reuse_or_append(instants_, free_);
    instants_[id].at = at;
    heap_.push_back(id);
    put(sift_up(static_cast<std::uint32_t>(heap_.size() - 1), at), id);
    recent_[next_recent_] = id;
    next_recent_ = (next_recent_ + 1) % recent_.size();
    return id;
  }
  void remove_instant(std::uint32_t id) {
    Instant& inst = instants_[id];
    const std::uint32_t i = inst.heap_index;
    inst.heap_index = none;
    inst.flows.clear();
    free_.push_back(id);
    for (std::uint32_t& r : recent_) {
      if (r == id) r = none;
    }
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    const double at = instants_[last].at;
    std::uint32_t j = sift_up(i, at);
    if (j == i) j = sift_down(i, at);
    put(j, last);
  }
  // With a hole at heap index i for an instant at `at`: moves later parents down into it (or earlier children up)
  // and returns where the instant belongs.
  std::uint32_t sift_up(std::uint32_t i, double at) {
    while (i > 0) {
      const std::uint32_t parent = (i - 1) / 2;
      if (instants_[heap_[parent]].at <= at) break;
      put(i, heap_[parent]);
      i = parent;
    }
    return i;
  }
  std::uint32_t sift_down(std::uint32_t i, double at) {
    const auto n = static_cast<std::uint32_t>(heap_.size());
    while (true) {
      std::uint32_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && instants_[heap_[child + 1]].at < instants_[heap_[child]].at) ++child;
      if (instants_[heap_[child]].at >= at) break;
      put(i, heap_[child]);
      i = child;
    }
    return i;
  }
  void put(std::uint32_t i, std::uint32_t id) {
    heap_[i] = id;
    instants_[id].heap_index = i;
  }
  std::vector<Instant> instants_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> heap_;  // instants, earliest first
  std::vector<Place> place_;         // by flow
  std::array<std::uint32_t, 4> recent_{none, none, none, none};
  std::size_t next_recent_ = 0;
};

// Pending events grouped by instant: a heap of instants, each with its bucket of events. Events of one instant (a
// symmetric step's transfers all end together) share one heap entry.
class EventQueue {
public:
  void push(double at, Event e) {
    for (const Open& o : recent_) {
      if (o.bucket != none && std::fabs(o.at - at) <= tolerance(at)) {
        buckets_[o.bucket].push_back(e);
        return;
      }
    }
    const std::uint32_t b = reuse_or_append(buckets_, free_);
    buckets_[b].push_back(e);
    heap_.push_back({at, b});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
    recent_[next_recent_] = {at, b};
    next_recent_ = (next_recent_ + 1) % recent_.size();
  }
  bool empty() const { return heap_.empty(); }
  double next_at() const { return heap_.front().at; }
  // Moves the earliest instant's events into `out` (after what is there) and returns its time.
  double pop(std::vector<Event>& out) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const Entry top = heap_.back();
    heap_.pop_back();
    std::vector<Event>& bucket = buckets_[top.bucket];
    out.insert(out.end(), bucket.begin(), bucket.end());
    bucket.clear();
    free_.push_back(top.bucket);
    for (Open& o : recent_) {
      if (o.bucket == top.bucket) o.bucket = none;
    }
    return top.at;
  }
  // Calls visit(at, event) for every pending event, in no particular order.
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (const Entry& entry : heap_) {
      for (const Event& e : buckets_[entry.bucket])
        visit(entry.at, e);
    }
  }
  // Every pending event `by` seconds later (the order stays).
  void shift(double by) {
    for (Entry& entry : heap_)
      entry.at += by;
    for (Open& o : recent_)
      o.at += by;
  }

private:
  struct Entry {
    double at;
    std::uint32_t bucket;
    bool operator>(const Entry& o) const { return at > o.at; }
  };
  struct Open {
    double at = 0;
    std::uint32_t bucket = none;
  };
  std::vector<Entry> heap_;  // a min-heap of instants
  std::vector<std::vector<Event>> buckets_;
  std::vector<std::uint32_t> free_;
  std::array<Open, 4> recent_{};
  std::size_t next_recent_ = 0;
};

}  // namespace dtsim::flow_engine
