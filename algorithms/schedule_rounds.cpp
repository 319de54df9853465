#include "algorithms/schedule_rounds.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "algorithms/collectives.hpp"
#include "algorithms/step_walker.hpp"
#include "algorithms/verifier.hpp"

namespace dtsim {
namespace {

class RoundHandler {
public:
  RoundHandler(const Schedule& s, bool contributions)
      : s_(s),
        p_(static_cast<std::size_t>(s.ranks)),
        c_(contributions ? s.chunks.size() : 0),
        counts_(p_ * c_ * p_, 0),
        start_(p_, 0),
        last_round_(p_, -1),
        landings_(p_) {
    for (std::size_t r = 0; r < static_cast<std::size_t>(s.participants) && c_ > 0; ++r) {
      for (std::size_t c = 0; c < c_; ++c) {
        const int owner = initial_owner(s, static_cast<int>(r), static_cast<std::uint32_t>(c));
        if (owner >= 0) counts_[(r * c_ + c) * p_ + static_cast<std::size_t>(owner)] = 1;
      }
    }
    initial_ = counts_;
  }

  std::uint32_t on_send_posted(std::size_t rank, const Op& send) {
    if (c_ == 0) {
      sent_.push_back({{}, start_[rank]});
      return static_cast<std::uint32_t>(sent_.size() - 1);
    }
    const Span& sp = s_.spans[send.span()];
    const std::uint16_t* from = counts_.data() + (rank * c_ + sp.first_chunk) * p_;
    sent_.push_back(
        {std::vector<std::uint16_t>(from, from + static_cast<std::size_t>(sp.chunk_count) * p_), start_[rank]});
    return static_cast<std::uint32_t>(sent_.size() - 1);
  }

  void on_matched(std::size_t src, std::size_t dst, std::uint32_t token, const Op& send, const Op& recv) {
    const int round = std::max(sent_[token].level, start_[dst]);
    int& index = pair_count_[{src, dst}];
    transfers_.push_back({round, static_cast<int>(src), static_cast<int>(dst), send.span(), s_.span_bytes(send.span()),
                          recv.kind() == OpKind::recv_reduce, index++});
    last_round_[src] = std::max(last_round_[src], round);
    last_round_[dst] = std::max(last_round_[dst], round);
    landings_[dst].push_back({recv.span(), recv.kind(), token});
  }

  void on_step_done(std::size_t r, std::span<const Op>) {
    for (const Landing& l : landings_[r]) {
      if (c_ == 0) break;
      std::uint16_t* to = counts_.data() + (r * c_ + s_.spans[l.span].first_chunk) * p_;
      const std::vector<std::uint16_t>& from = sent_[l.token].counts;
      for (std::size_t k = 0; k < from.size(); ++k)
        to[k] = l.kind == OpKind::recv_copy ? from[k] : static_cast<std::uint16_t>(to[k] + from[k]);
    }
    if (!landings_[r].empty() || last_round_[r] >= start_[r]) {
      start_[r] = std::max(start_[r], last_round_[r] + 1);
      // the rank's buffer as it is from round start_[r] on
      if (c_ > 0)
        changes_.push_back(
            {start_[r], r,
             std::vector<std::uint16_t>(counts_.begin() + static_cast<std::ptrdiff_t>(r * c_ * p_),
                                        counts_.begin() + static_cast<std::ptrdiff_t>((r + 1) * c_ * p_))});
    }
    landings_[r].clear();
  }

  bool failed() const { return false; }

  ScheduleRounds finish(const std::vector<std::uint16_t>& start, std::uint64_t max_cells) {
    ScheduleRounds out;
    out.ranks = s_.ranks;
    out.participants = s_.participants;
    out.chunks = c_;
    if (c_ == 0) {
      for (const RoundTransfer& t : transfers_)
        out.rounds = std::max(out.rounds, t.round + 1);
      std::stable_sort(transfers_.begin(), transfers_.end(),
                       [](const RoundTransfer& a, const RoundTransfer& b) { return a.round < b.round; });
      out.transfers = transfers_;
      return out;
    }
    for (const RoundTransfer& t : transfers_)
      out.rounds = std::max(out.rounds, t.round + 1);
    if (static_cast<std::uint64_t>(out.rounds + 1) * p_ * p_ * c_ > max_cells) {
      throw std::invalid_argument("too large to draw round by round: " + std::to_string(out.rounds) + " rounds of " +
                                  std::to_string(p_) + " ranks x " + std::to_string(c_) + " chunks");
    }
    std::stable_sort(transfers_.begin(), transfers_.end(),
                     [](const RoundTransfer& a, const RoundTransfer& b) { return a.round < b.round; });
    out.transfers = transfers_;
    std::stable_sort(changes_.begin(), changes_.end(),
                     [](const Change& a, const Change& b) { return a.from_round < b.from_round; });
    std::vector<std::uint16_t> state = start;
    std::size_t next = 0;
    for (int k = 0; k <= out.rounds; ++k) {
      while (next < changes_.size() && changes_[next].from_round <= k) {
        std::copy(changes_[next].counts.begin(), changes_[next].counts.end(),
                  state.begin() + static_cast<std::ptrdiff_t>(changes_[next].rank * c_ * p_));
        ++next;
      }
      out.contributions.push_back(state);
    }
    return out;
  }

  const std::vector<std::uint16_t>& initial() const { return initial_; }

private:
  struct Sent {
    std::vector<std::uint16_t> counts;
    int level;
  };
  struct Landing {
    std::uint32_t span;
    OpKind kind;
    std::uint32_t token;
  };
  struct Change {
    int from_round;
    std::size_t rank;
    std::vector<std::uint16_t> counts;
  };
  const Schedule& s_;
  std::size_t p_;
  std::size_t c_;
  std::vector<std::uint16_t> counts_;
  std::vector<int> start_;       // per rank: the round its current step starts in
  std::vector<int> last_round_;  // per rank: the last round of its transfers so far
  std::vector<std::vector<Landing>> landings_;
  std::vector<Sent> sent_;
  std::vector<RoundTransfer> transfers_;
  std::vector<Change> changes_;
  std::vector<std::uint16_t> initial_;
  std::map<std::pair<std::size_t, std::size_t>, int> pair_count_;
};

}  // namespace

int ScheduleRounds::held(int state, int rank, std::size_t chunk) const {
  int sum = 0;
  for (int q = 0; q < ranks; ++q)
    sum += count(state, rank, chunk, q);
  return sum;
}

ScheduleRounds schedule_rounds(const Schedule& schedule, bool contributions, std::uint64_t max_cells) {
  const Schedule expanded = schedule.compact() ? expand(schedule) : schedule;
  if (contributions) {
    const VerifyReport report = verify(expanded);
    if (!report.ok) throw std::invalid_argument("the schedule does not verify: " + report.error);
  } else if (std::string problem = check_well_formed(expanded); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  const auto p = static_cast<std::uint64_t>(expanded.ranks);
  if (contributions && p * p * expanded.chunks.size() > max_cells) {
    throw std::invalid_argument("too large to draw: " + std::to_string(p) + " ranks x " +
                                std::to_string(expanded.chunks.size()) + " chunks");
  }
  RoundHandler handler(expanded, contributions);
  const std::vector<std::uint16_t> start = handler.initial();
  const WalkOutcome outcome = walk_schedule(expanded, handler);
  if (!outcome.error.empty()) throw std::invalid_argument(outcome.error);
  return handler.finish(start, max_cells);
}

}  // namespace dtsim
