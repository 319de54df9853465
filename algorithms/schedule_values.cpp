#include "algorithms/schedule_values.hpp"

#include <stdexcept>
#include <string>

#include "algorithms/step_walker.hpp"

namespace dtsim {
namespace {

// The walker's handler: a send snapshots its span when its step is posted; a matched receive waits with the
// snapshot until its step ends, then adds or overwrites.
class ValueHandler {
public:
  ValueHandler(const Schedule& s, std::span<std::vector<float>* const> buffers)
      : s_(s), buffers_(buffers), landed_(static_cast<std::size_t>(s.ranks)) {}

  std::uint32_t on_send_posted(std::size_t rank, const Op& send) {
    const Chunk c = s_.span_extent(send.span());
    std::uint32_t slot = 0;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(snapshots_.size());
      snapshots_.emplace_back();
    }
    const float* from = buffers_[rank]->data() + c.offset_bytes / 4;
    snapshots_[slot].assign(from, from + c.size_bytes / 4);
    return slot;
  }

  void on_matched(std::size_t, std::size_t dst, std::uint32_t token, const Op&, const Op& recv) {
    landed_[dst].push_back({recv, token});
  }

  void on_step_done(std::size_t rank, std::span<const Op>) {
    for (const Landed& l : landed_[rank]) {
      const Chunk c = s_.span_extent(l.recv.span());
      float* to = buffers_[rank]->data() + c.offset_bytes / 4;
      const std::vector<float>& values = snapshots_[l.token];
      if (l.recv.kind() == OpKind::recv_reduce) {
        for (std::size_t i = 0; i < values.size(); ++i)
          to[i] += values[i];
      } else {
        std::copy(values.begin(), values.end(), to);
      }
      free_.push_back(l.token);
    }
    landed_[rank].clear();
  }

  bool failed() const { return false; }

private:
  struct Landed {
    Op recv;
    std::uint32_t token;
  };
  const Schedule& s_;
  std::span<std::vector<float>* const> buffers_;
  std::vector<std::vector<Landed>> landed_;  // by rank: the receives of its current step, in match order
  std::vector<std::vector<float>> snapshots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace

void run_on_values(const Schedule& schedule, std::span<std::vector<float>* const> buffers) {
  const Schedule full = schedule.compact() ? expand(schedule) : Schedule{};
  const Schedule& s = schedule.compact() ? full : schedule;
  if (buffers.size() != static_cast<std::size_t>(s.ranks)) {
    throw std::invalid_argument("run_on_values: " + std::to_string(buffers.size()) + " buffers for " +
                                std::to_string(s.ranks) + " ranks");
  }
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    if (buffers[r]->size() * 4 != s.bytes) {
      throw std::invalid_argument("run_on_values: rank " + std::to_string(r) + "'s buffer holds " +
                                  std::to_string(buffers[r]->size() * 4) + " bytes, the schedule " +
                                  std::to_string(s.bytes));
    }
  }
  if (std::string problem = check_well_formed(s); !problem.empty()) {
    throw std::invalid_argument("run_on_values: " + problem);
  }
  ValueHandler handler(s, buffers);
  if (const WalkOutcome outcome = walk_schedule(s, handler); !outcome.error.empty()) {
    throw std::invalid_argument("run_on_values: " + outcome.error);
  }
}

}  // namespace dtsim
