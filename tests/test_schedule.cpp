#include <catch2/catch.hpp>
#include <numeric>

#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "algorithms/schedule.hpp"
#include "algorithms/schedule_values.hpp"

using namespace dtsim;

TEST_CASE("split_even tiles the buffer with sizes differing by at most one element") {
  for (std::uint64_t bytes : {0ULL, 1ULL, 7ULL, 1000ULL, 100000000ULL}) {
    for (std::uint32_t parts : {1U, 2U, 3U, 7U, 64U}) {
      const auto chunks = split_even(bytes, parts, 1);
      REQUIRE(chunks.size() == parts);
      std::uint64_t offset = 0, lo = UINT64_MAX, hi = 0;
      for (const Chunk& c : chunks) {
        CHECK(c.offset_bytes == offset);
        offset += c.size_bytes;
        lo = std::min(lo, c.size_bytes);
        hi = std::max(hi, c.size_bytes);
      }
      CHECK(offset == bytes);
      CHECK(hi - lo <= 1);
    }
  }
  const auto floats = split_even(40, 3, 4);
  CHECK(floats[0].size_bytes == 16);
  CHECK(floats[1].size_bytes == 12);
  CHECK(floats[2].offset_bytes == 28);
  CHECK_THROWS_AS(split_even(10, 3, 4), std::invalid_argument);
  CHECK_THROWS_AS(split_even(10, 0, 1), std::invalid_argument);
}

TEST_CASE("Op packs kind, step start, peer and chunk into 8 bytes") {
  Op op = Op::recv_reduce(123456, 4000000000U);
  CHECK(op.kind() == OpKind::recv_reduce);
  CHECK(op.peer() == 123456);
  CHECK(op.span() == 4000000000U);
  CHECK_FALSE(op.starts_step());
  op.mark_step_start();
  CHECK(op.starts_step());
  CHECK(op.peer() == 123456);
  CHECK_THROWS_AS(Op::send(-1, 0), std::out_of_range);
  CHECK_THROWS_AS(Op::send(static_cast<int>(Op::max_peer) + 1, 0), std::out_of_range);
}

TEST_CASE("ring allreduce: 2(P-1) steps of one send and one receive per rank") {
  const Schedule s = expand(ring_allreduce(5, 1000));  // (built compact: each pass one stored step and a repeat)
  CHECK(s.ranks == 5);
  CHECK(s.chunks.size() == 5);
  CHECK(s.op_count() == 4U * 5 * 4);
  for (int r = 0; r < 5; ++r) {
    const auto ops = s.rank_ops(r);
    int steps = 0;
    for (const Op& op : ops)
      steps += op.starts_step() ? 1 : 0;
    CHECK(steps == 8);
    CHECK(ops[0].kind() == OpKind::send);
    CHECK(ops[0].peer() == (r + 1) % 5);
    CHECK(ops[1].kind() == OpKind::recv_reduce);
    CHECK(ops[1].peer() == (r + 4) % 5);
    CHECK(ops.back().kind() == OpKind::recv_copy);
  }
}

TEST_CASE("ring allreduce with 1 rank or 0 bytes has nothing to send") {
  CHECK(ring_allreduce(1, 100000000).op_count() == 0);
  CHECK(ring_allreduce(1, 100000000).chunks.size() == 1);
  CHECK(ring_allreduce(8, 0).op_count() == 0);
  CHECK(ring_allreduce(8, 0).chunks.empty());
  CHECK_THROWS_AS(ring_allreduce(0, 10), std::invalid_argument);
  // built compact (4P ops), but the full form of 9000 ranks is beyond what expand() and the executors that need it hold
  CHECK(ring_allreduce(9000, 10).op_count() == 4U * 9000);
  CHECK_THROWS_WITH(expand(ring_allreduce(9000, 10)), Catch::Contains("at most 268435456 are supported"));
  CHECK_THROWS_WITH(check_expanded_size(ring_allreduce(9000, 10)), Catch::Contains("at most 268435456 are supported"));
}

TEST_CASE("registry finds ring and names the accepted algorithms otherwise") {
  CHECK(find_algorithm("ring").make_schedule == &ring_allreduce);
  try {
    find_algorithm("rign");
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("accepted: ring") != std::string::npos);
  }
}

TEST_CASE("run_on_values: every allreduce leaves the sum of the participants' buffers at every one of them") {
  for (const AlgorithmInfo& algorithm : algorithms()) {
    if (algorithm.collective != Collective::allreduce) continue;
    for (int ranks : {3, 8}) {
      CAPTURE(algorithm.name, ranks);
      const Schedule s = algorithm.build(ranks, 4 * 1001, AlgorithmOptions(4));
      std::vector<std::vector<float>> values(static_cast<std::size_t>(s.ranks));
      std::vector<std::vector<float>*> buffers;
      for (int r = 0; r < s.ranks; ++r) {
        auto& v = values[static_cast<std::size_t>(r)];
        v.assign(1001, 0.0F);
        if (r < s.participants) {
          for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>((r + 1) * (i % 7 + 1));  // sums are exact in float
        }
        buffers.push_back(&v);
      }
      run_on_values(s, buffers);
      const float participants = static_cast<float>(s.participants);
      for (int r = 0; r < s.participants; ++r) {
        const auto& v = values[static_cast<std::size_t>(r)];
        bool sum_everywhere = true;
        for (std::size_t i = 0; i < v.size(); ++i)
          sum_everywhere = sum_everywhere && v[i] == participants * (participants + 1) / 2 * (i % 7 + 1);
        CHECK(sum_everywhere);
      }
    }
  }
  const Schedule ring = ring_allreduce(4, 4 * 100, AlgorithmOptions(4));
  std::vector<float> short_buffer(99), other(100);
  std::vector<std::vector<float>*> wrong = {&short_buffer, &other, &other, &other};
  CHECK_THROWS_WITH(run_on_values(ring, wrong), Catch::Contains("rank 0's buffer holds 396 bytes"));
}
