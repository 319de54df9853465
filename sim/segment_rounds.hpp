// Rounds per segment (FlowOptions::segment_rounds), as the flow executor and its lumped form both run them: what each
// segment (a Schedule several units run at once) has in flight, and the units whose next repetition of a step repeated
// in lockstep waits until the segment has nothing in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dtsim::engine {

template <typename Unit>
class SegmentRounds {
public:
  void resize(std::size_t segments) {
    busy_.assign(segments, 0);
    seen_at_.assign(segments, 0);
    was_busy_.assign(segments, 0);
    held_.assign(segments, {});
  }
  // One more flow or timer of the segment in flight.
  void add(std::size_t segment) { ++busy_[segment]; }
  // One of them is done; when it was the last, the units held for the segment's round join `ready`.
  void done(std::size_t segment, std::vector<Unit>& ready) {
    if (--busy_[segment] > 0) return;
    ready.insert(ready.end(), held_[segment].begin(), held_[segment].end());
    held_[segment].clear();
  }
  // Whether the segment had anything in flight when batch `batch`'s units started posting (taken at the batch's first
  // query, so that units that post in this batch do not hold the others of their round).
  bool busy_at_batch(std::size_t segment, std::uint64_t batch) {
    if (seen_at_[segment] != batch) {
      seen_at_[segment] = batch;
      was_busy_[segment] = busy_[segment] > 0 ? 1 : 0;
    }
    return was_busy_[segment] != 0;
  }
  // The unit's next repetition waits for the segment's round.
  void hold(std::size_t segment, Unit unit) { held_[segment].push_back(unit); }

private:
  std::vector<std::uint32_t> busy_;     // by segment: its flows and timers pending
  std::vector<std::uint64_t> seen_at_;  // busy_at_batch's snapshot: the batch it was taken in
  std::vector<char> was_busy_;
  std::vector<std::vector<Unit>> held_;  // by segment: units waiting for its round
};

}  // namespace dtsim::engine
