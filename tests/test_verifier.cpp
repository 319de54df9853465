#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "algorithms/step_walker.hpp"
#include "algorithms/transfer_matching.hpp"
#include "algorithms/verifier.hpp"
#include "schedule_helpers.hpp"

using namespace dtsim;
using dtsim::test::ops_by_rank;
using dtsim::test::step_start;
using dtsim::test::with_ops;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("verifier proves ring allreduce over ranks x bytes") {
  for (int ranks : {1, 2, 3, 5, 8, 64}) {
    for (std::uint64_t bytes : {0ULL, 1ULL, 1000ULL, 100000000ULL}) {
      CAPTURE(ranks, bytes);
      const VerifyReport report = verify(ring_allreduce(ranks, bytes));
      CHECK(report.error.empty());
      REQUIRE(report.ok);
      if (ranks > 1 && bytes > 0) {
        CHECK(report.messages == 2ULL * ranks * (ranks - 1));
        CHECK(report.max_steps == 2ULL * (ranks - 1));
        // every rank sends 2(P-1)/P of the buffer
        CHECK(report.bytes_sent == 2ULL * (ranks - 1) * bytes);
      } else {
        CHECK(report.messages == 0);
      }
    }
  }
}

TEST_CASE("verifier rejects a missing send") {
  const Schedule base = ring_allreduce(4, 4000);
  SECTION("the last send: its receiver waits forever") {
    auto ops = ops_by_rank(base);
    REQUIRE(ops[2][ops[2].size() - 2].kind() == OpKind::send);
    ops[2].erase(ops[2].end() - 2);
    ops[2].back() = step_start(ops[2].back());
    const VerifyReport report = verify(with_ops(base, ops));
    CAPTURE(report.error);
    CHECK_FALSE(report.ok);
    CHECK(contains(report.error, "deadlock or unmatched receive: rank 3 waits on recv-copy chunk 1 from 2"));
  }
  SECTION("an early send: the next send on that channel meets the wrong receive") {
    auto ops = ops_by_rank(base);
    REQUIRE(ops[2][2].kind() == OpKind::send);
    ops[2].erase(ops[2].begin() + 2);
    ops[2][2] = step_start(ops[2][2]);
    const VerifyReport report = verify(with_ops(base, ops));
    CAPTURE(report.error);
    CHECK_FALSE(report.ok);
    CHECK(contains(report.error, "rank 2 sends chunk 0 to rank 3, which receives chunk 1"));
  }
}

TEST_CASE("verifier rejects a double reduction") {
  auto ops = ops_by_rank(ring_allreduce(4, 4000));
  // An extra final step: rank 3 sends chunk 1 to rank 0, which reduces it in a second time.
  ops[3].push_back(step_start(Op::send(0, 1)));
  ops[0].push_back(step_start(Op::recv_reduce(3, 1)));
  const VerifyReport report = verify(with_ops(ring_allreduce(4, 4000), ops));
  CAPTURE(report.error);
  CHECK_FALSE(report.ok);
  CHECK(contains(report.error, "allreduce postcondition: rank 0 chunk 1"));
  CHECK(contains(report.error, "2 times"));
}

TEST_CASE("verifier rejects a reduction that misses a contribution") {
  auto ops = ops_by_rank(ring_allreduce(3, 3000));
  // Turn rank 1's first receive into a copy: it overwrites its own contribution instead of adding to it.
  REQUIRE(ops[1][1].kind() == OpKind::recv_reduce);
  ops[1][1] = Op::recv_copy(ops[1][1].peer(), ops[1][1].span());
  const VerifyReport report = verify(with_ops(ring_allreduce(3, 3000), ops));
  CAPTURE(report.error);
  CHECK_FALSE(report.ok);
  CHECK(contains(report.error, "0 times"));
}

TEST_CASE("verifier rejects mismatched chunks, self-sends, stray sends and copy races") {
  const Schedule base = ring_allreduce(3, 3000);
  SECTION("receiver names another chunk") {
    auto ops = ops_by_rank(base);
    ops[1][1] = Op::recv_reduce(ops[1][1].peer(), (ops[1][1].span() + 1) % 3);
    const VerifyReport report = verify(with_ops(base, ops));
    CAPTURE(report.error);
    CHECK_FALSE(report.ok);
    CHECK(contains(report.error, "which receives chunk"));
  }
  SECTION("send to itself") {
    auto ops = ops_by_rank(base);
    ops[0].push_back(step_start(Op::send(0, 0)));
    CHECK(contains(verify(with_ops(base, ops)).error, "to itself"));
  }
  SECTION("peer out of range") {
    auto ops = ops_by_rank(base);
    ops[0].push_back(step_start(Op::send(7, 0)));
    CHECK(contains(verify(with_ops(base, ops)).error, "peer 7 is not a rank"));
  }
  SECTION("a send nobody receives") {
    auto ops = ops_by_rank(base);
    ops[0].push_back(step_start(Op::send(1, 0)));
    const VerifyReport report = verify(with_ops(base, ops));
    CAPTURE(report.error);
    CHECK_FALSE(report.ok);
    CHECK(contains(report.error, "deadlock or unmatched receive: rank 0 waits on send chunk 0 to 1"));
  }
  SECTION("a copy racing another receive of the same chunk") {
    auto ops = ops_by_rank(base);
    ops[2].push_back(step_start(Op::send(0, 2)));
    ops[1].push_back(step_start(Op::send(0, 2)));
    ops[0].push_back(step_start(Op::recv_copy(2, 2)));
    ops[0].push_back(Op::recv_reduce(1, 2));
    CHECK(contains(verify(with_ops(base, ops)).error, "received twice in one step"));
  }
  SECTION("a cyclic wait between two ranks is a deadlock") {
    auto ops = ops_by_rank(base);
    ops[0].push_back(step_start(Op::recv_copy(1, 0)));
    ops[0].push_back(step_start(Op::send(1, 0)));
    ops[1].push_back(step_start(Op::recv_copy(0, 0)));
    ops[1].push_back(step_start(Op::send(0, 0)));
    CHECK(contains(verify(with_ops(base, ops)).error, "deadlock"));
  }
}

TEST_CASE("verifier refuses schedules too large for its state rather than checking part") {
  const VerifyReport report = verify(ring_allreduce(64, 1000000), 1000);
  CAPTURE(report.error);
  CHECK_FALSE(report.ok);
  CHECK(contains(report.error, "too large to verify"));
}

TEST_CASE("spans: one message carries a run of chunks, and the verifier checks every chunk in it") {
  // Two ranks, four chunks: each sends the whole buffer as one span and reduces the other's.
  ScheduleBuilder builder(Collective::allreduce, "hand-made", 2, 4000, split_even(4000, 4, 1));
  const std::uint32_t whole = builder.add_span(0, 4);
  CHECK(builder.add_span(0, 4) == whole);  // the same run is the same span
  CHECK(builder.add_span(2, 1) == 2);      // single chunks are their own spans
  const std::uint32_t upper = builder.add_span(2, 2);
  for (int r = 0; r < 2; ++r) {
    builder.begin_rank(r);
    builder.begin_step();
    builder.add(Op::send(1 - r, whole));
    builder.add(Op::recv_reduce(1 - r, whole));
  }
  const Schedule good = builder.finish();
  CHECK(good.span_bytes(whole) == 4000);
  CHECK(good.span_bytes(upper) == 2000);
  const VerifyReport report = verify(good);
  CHECK(report.ok);
  CHECK(report.bytes_sent == 8000);

  auto ops = ops_by_rank(good);
  ops[1][1] = Op::recv_reduce(0, upper);  // receives half of what rank 0 sends
  const VerifyReport bad = verify(with_ops(good, ops));
  CAPTURE(bad.error);
  CHECK_FALSE(bad.ok);
  CHECK(contains(bad.error, "rank 0 sends chunks 0-3 to rank 1, which receives chunks 2-3"));
}

namespace {

// The walker's matches as (src, src step, dst, dst step, span): a receive is matched while its step is posted, so the
// receiver's step is the number of steps it has ended so far.
struct MatchRecorder {
  std::vector<std::uint32_t> steps_done;
  std::vector<std::uint32_t> token_step;
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>> matches;
  std::uint32_t on_send_posted(std::size_t rank, const Op&) {
    token_step.push_back(steps_done[rank]);
    return static_cast<std::uint32_t>(token_step.size() - 1);
  }
  void on_matched(std::size_t src, std::size_t dst, std::uint32_t token, const Op& send, const Op&) {
    matches.emplace_back(src, token_step[token], dst, steps_done[dst], send.span());
  }
  void on_step_done(std::size_t rank, std::span<const Op>) { ++steps_done[rank]; }
  bool failed() const { return false; }
};

}  // namespace

TEST_CASE("transfers matched in two passes are those the step walker matches, steps on both sides included") {
  // by hand: rank 0 sends chunk 0 in step 0 and chunk 1 in step 1; rank 1 takes both in its step 0
  Schedule s = ring_allreduce(2, 8000);
  const Schedule two = with_ops(s, {{step_start(Op::send(1, 0)), step_start(Op::send(1, 1))},
                                    {step_start(Op::recv_copy(0, 0)), Op::recv_copy(0, 1)}});
  const std::optional<MatchedTransfers> t = match_transfers(two);
  REQUIRE(t.has_value());
  REQUIRE(t->size() == 2);
  CHECK(t->first_into == std::vector<std::uint64_t>{0, 0, 2});
  CHECK(t->src_step == std::vector<std::uint32_t>{0, 1});
  CHECK(t->dst_step == std::vector<std::uint32_t>{0, 0});
  CHECK(t->span == std::vector<std::uint32_t>{0, 1});
  // a send nobody receives
  CHECK_FALSE(match_transfers(with_ops(s, {{step_start(Op::send(1, 0)), step_start(Op::send(1, 1))},
                                           {step_start(Op::recv_copy(0, 0))}}))
                  .has_value());
  // every algorithm, against the walker
  AlgorithmOptions options;
  options.set("ps-placement", "colocated");
  options.set("servers", 3);
  options.set("ranks-per-node", 3);
  for (const std::string name :
       {"ring", "tree", "pipelined-tree", "dbtree", "butterfly", "rabenseifner", "ps", "direct", "hierarchical"}) {
    for (int ranks : {6, 9}) {
      CAPTURE(name, ranks);
      const Schedule schedule = expand(find_algorithm(name).build(ranks, 3000000, options));  // every step
      MatchRecorder walk;
      walk.steps_done.assign(static_cast<std::size_t>(ranks), 0);
      REQUIRE(walk_schedule(schedule, walk).error.empty());
      const std::optional<MatchedTransfers> matched = match_transfers(schedule);
      REQUIRE(matched.has_value());
      std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>> two_passes;
      for (std::size_t i = 0; i < matched->size(); ++i) {
        two_passes.emplace_back(matched->src[i], matched->src_step[i], matched->dst[i], matched->dst_step[i],
                                matched->span[i]);
      }
      std::sort(walk.matches.begin(), walk.matches.end());
      std::sort(two_passes.begin(), two_passes.end());
      CHECK(two_passes == walk.matches);
      CHECK(!two_passes.empty());
    }
  }
}
