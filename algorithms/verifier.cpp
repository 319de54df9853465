#include "algorithms/verifier.hpp"

#include <limits>

#include <algorithm>
#include <vector>

#include "algorithms/collectives.hpp"
#include "algorithms/step_walker.hpp"

namespace dtsim {
namespace {

using Count = std::uint16_t;

struct Landing {  // a matched receive, applied when its step ends
  std::uint32_t span;
  OpKind kind;
  std::uint32_t snapshot;
};

// Gives the walk its meaning in contribution counts: counts_[rank][chunk][k] = how often rank k's contribution is in
// the rank's copy of the chunk. A send snapshots its chunk's counts; a receive applies the snapshot at step end.
class CountingHandler {
public:
  explicit CountingHandler(const Schedule& s)
      : s_(s),
        p_(static_cast<std::size_t>(s.ranks)),
        c_(s.chunks.size()),
        participants_(static_cast<std::size_t>(s.participants)),
        counts_(p_ * c_ * p_, 0),
        landings_(p_),
        steps_(p_, 0) {
    for (std::size_t r = 0; r < participants_; ++r) {
      for (std::size_t c = 0; c < c_; ++c) {
        const int owner = initial_owner(s, static_cast<int>(r), static_cast<std::uint32_t>(c));
        if (owner >= 0) cell(r, c)[static_cast<std::size_t>(owner)] = 1;
      }
    }
  }

  // Snapshots the counts of every chunk of the sent span (chunk after chunk, P counts each).
  std::uint32_t on_send_posted(std::size_t rank, const Op& send) {
    ++report_.messages;
    report_.bytes_sent += s_.span_bytes(send.span());
    std::uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(pool_.size());
      pool_.emplace_back();
    }
    const Span& sp = s_.spans[send.span()];
    const Count* from = cell(rank, sp.first_chunk);  // a span's chunks are adjacent in counts_
    pool_[slot].assign(from, from + static_cast<std::size_t>(sp.chunk_count) * p_);
    return slot;
  }

  void on_matched(std::size_t src, std::size_t dst, std::uint32_t snapshot, const Op& send, const Op& recv) {
    if (!(s_.spans[send.span()] == s_.spans[recv.span()])) {
      fail("rank " + std::to_string(src) + " sends " + describe_span(s_, send.span()) + " to rank " +
           std::to_string(dst) + ", which receives " + describe_span(s_, recv.span()) + " in that place");
    }
    landings_[dst].push_back(Landing{recv.span(), recv.kind(), snapshot});
  }

  void on_step_done(std::size_t r, std::span<const Op> step) {
    check_races(r, step);
    for (const Landing& landing : landings_[r]) {
      Count* to = cell(r, s_.spans[landing.span].first_chunk);
      const std::vector<Count>& from = pool_[landing.snapshot];
      if (landing.kind == OpKind::recv_copy) {
        std::copy(from.begin(), from.end(), to);
      } else {
        for (std::size_t k = 0; k < from.size(); ++k)
          to[k] = static_cast<Count>(to[k] + from[k]);
      }
      free_slots_.push_back(landing.snapshot);
    }
    landings_[r].clear();
    report_.max_steps = std::max(report_.max_steps, ++steps_[r]);
  }

  bool failed() const { return !report_.error.empty(); }

  void check_postcondition() {
    for (std::size_t r = 0; r < participants_ && !failed(); ++r) {
      for (std::size_t c = 0; c < c_ && !failed(); ++c) {
        const ExpectedChunk expected = expected_chunk(s_, static_cast<int>(r), static_cast<std::uint32_t>(c));
        if (expected.kind == ExpectedChunk::Kind::anything) continue;
        const Count* counts = cell(r, c);
        for (std::size_t k = 0; k < participants_; ++k) {
          const Count want = expected.kind == ExpectedChunk::Kind::sum_of_all || static_cast<int>(k) == expected.rank;
          if (counts[k] != want) {
            fail(std::string(to_string(s_.collective)) + " postcondition: rank " + std::to_string(r) + " chunk " +
                 std::to_string(c) + " holds the contribution of rank " + std::to_string(k) + " " +
                 std::to_string(counts[k]) + " times (expected " + (want == 1 ? "exactly once" : "none") + ")");
            break;
          }
        }
      }
    }
  }

  void fail(const std::string& message) {
    if (report_.error.empty()) report_.error = message;
  }

  VerifyReport& report() { return report_; }

private:
  Count* cell(std::size_t rank, std::size_t chunk) { return counts_.data() + (rank * c_ + chunk) * p_; }

  bool overlap(std::uint32_t a, std::uint32_t b) const {
    const Span& x = s_.spans[a];
    const Span& y = s_.spans[b];
    return x.first_chunk < y.first_chunk + y.chunk_count && y.first_chunk < x.first_chunk + x.chunk_count;
  }

  void check_races(std::size_t r, std::span<const Op> step) {
    for (std::size_t a = 0; a < step.size(); ++a) {
      if (step[a].kind() != OpKind::recv_copy) continue;
      for (std::size_t b = 0; b < step.size(); ++b) {
        if (a != b && step[b].is_recv() && overlap(step[a].span(), step[b].span())) {
          fail("rank " + std::to_string(r) + " step " + std::to_string(steps_[r]) + ": " +
               describe_span(s_, step[a].span()) + " is received twice in one step, once as a copy");
          return;
        }
      }
    }
  }

  const Schedule& s_;
  std::size_t p_;
  std::size_t c_;
  std::size_t participants_;
  std::vector<Count> counts_;
  std::vector<std::vector<Landing>> landings_;
  std::vector<std::uint64_t> steps_;
  std::vector<std::vector<Count>> pool_;  // snapshots of sent spans, reused through free_slots_
  std::vector<std::uint32_t> free_slots_;
  VerifyReport report_;
};

}  // namespace

std::string too_large_to_verify(std::uint64_t ranks, std::uint64_t chunks, std::uint64_t max_state_cells) {
  std::uint64_t cells = 0;  // (an all-pairs schedule of 65,536 ranks has 2^32 chunks: 2^64 cells)
  const bool beyond_64_bits = __builtin_mul_overflow(ranks * ranks, chunks, &cells);
  if (!beyond_64_bits && cells <= max_state_cells) return {};
  return "schedule too large to verify: " + std::to_string(ranks) + " ranks x " + std::to_string(chunks) +
         " chunks needs " + (beyond_64_bits ? "more than 2^64" : std::to_string(cells)) + " state cells (limit " +
         std::to_string(max_state_cells) + ")";
}

VerifyReport verify(const Schedule& schedule, std::uint64_t max_state_cells) {
  if (std::string problem = check_well_formed(schedule, true); !problem.empty()) {
    return VerifyReport{false, problem};
  }
  if (std::string why =
          too_large_to_verify(static_cast<std::uint64_t>(schedule.ranks), schedule.chunks.size(), max_state_cells);
      !why.empty()) {
    VerifyReport refused;
    refused.error = std::move(why);
    refused.too_large = true;
    return refused;
  }
  if (schedule.compact()) return verify(expand(schedule), max_state_cells);  // the walk reads every step written out
  CountingHandler handler(schedule);
  const WalkOutcome outcome = walk_schedule(schedule, handler);
  if (!outcome.error.empty()) handler.fail(outcome.error);
  if (!handler.failed()) handler.check_postcondition();
  VerifyReport report = handler.report();
  report.ok = report.error.empty();
  return report;
}

}  // namespace dtsim
