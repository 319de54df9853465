#include <catch2/catch.hpp>
#include <cmath>

#include "algorithms/binomial_tree.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "models/alpha_beta.hpp"
#include "rel_diff.hpp"
#include "schedule_helpers.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/simgrid_executor.hpp"

using namespace dtsim;

namespace {

AlphaBetaGamma make_cost(double alpha_s, double bandwidth_Bps, double reduce_Bps) {
  AlphaBetaGamma cost;
  cost.alpha_s = alpha_s;
  cost.bandwidth_Bps = bandwidth_Bps;
  cost.reduce_Bps = reduce_Bps;
  return cost;
}

}  // namespace

TEST_CASE("ring allreduce on both executors equals 2(P-1)(alpha + n/(PB)) + (P-1)n/(PR) on a star") {
  // sizes divisible by P so that every chunk is n/P and the closed form is exact
  const std::vector<std::pair<int, std::uint64_t>> cases{{2, 100000000}, {3, 99000000},  {4, 100000000},
                                                         {5, 1000000},   {8, 100000000}, {16, 1000000}};
  const std::vector<AlphaBetaGamma> costs{make_cost(1e-6, 10e9 / 8, 10e9), make_cost(1e-3, 100e9 / 8, 2e9),
                                          make_cost(50e-6, 1e9 / 8, 1e12)};
  for (const auto& [ranks, bytes] : cases) {
    for (const AlphaBetaGamma& cost : costs) {
      CAPTURE(ranks, bytes, cost.alpha_s, cost.bandwidth_Bps, cost.reduce_Bps);
      const Schedule s = ring_allreduce(ranks, bytes);
      const double formula = ring_allreduce_seconds(ranks, bytes, cost);
      AnalyticalOptions an;
      an.cost = cost;
      const ExecutionResult analytical = run_analytical(s, an);
      CHECK(rel_diff(analytical.time_s, formula) < 1e-3);
      SimGridOptions sg;
      sg.cost = cost;
      const ExecutionResult simgrid = run_simgrid(s, sg);
      CHECK(rel_diff(simgrid.time_s, formula) < 1e-3);
      CHECK(simgrid.messages == analytical.messages);
      CHECK(simgrid.bytes_sent == analytical.bytes_sent);
      REQUIRE(simgrid.rank_finish_s.size() == static_cast<std::size_t>(ranks));
    }
  }
}

TEST_CASE("uneven chunks: the executors agree with each other and exceed the even-chunk formula") {
  const AlphaBetaGamma cost = make_cost(1e-6, 10e9 / 8, 10e9);
  const Schedule s = ring_allreduce(7, 1000003);
  AnalyticalOptions an;
  an.cost = cost;
  SimGridOptions sg;
  sg.cost = cost;
  const double analytical = run_analytical(s, an).time_s;
  const double simgrid = run_simgrid(s, sg).time_s;
  CHECK(rel_diff(simgrid, analytical) < 1e-9);
  CHECK(analytical >= ring_allreduce_seconds(7, 1000003, cost));
}

TEST_CASE("1 rank or 0 bytes take no time") {
  SimGridOptions sg;
  AnalyticalOptions an;
  for (const Schedule& s : {ring_allreduce(1, 1000000), ring_allreduce(6, 0)}) {
    CHECK(run_analytical(s, an).time_s == 0.0);
    CHECK(run_simgrid(s, sg).time_s == 0.0);
  }
}

TEST_CASE("LV08 is slower than CM02 on the same schedule (latency x13.01, bandwidth x0.97, ACK traffic)") {
  SimGridOptions cm02;
  SimGridOptions lv08;
  lv08.network_model = NetworkModel::lv08;
  const Schedule s = ring_allreduce(8, 100000000);
  const double ratio = run_simgrid(s, lv08).time_s / run_simgrid(s, cm02).time_s;
  CHECK(ratio > 1.03);
  CHECK(ratio < 1.2);
}

TEST_CASE("real-payload mode produces the exact sum on random data") {
  for (int ranks : {2, 3, 5, 8}) {
    for (std::uint64_t bytes : {4ULL, 1000ULL, 40004ULL}) {
      CAPTURE(ranks, bytes);
      AlgorithmOptions options;
      options.element_bytes = 4;
      SimGridOptions sg;
      sg.real_payload = true;
      sg.payload_seed = 42 + static_cast<std::uint64_t>(ranks);
      const ExecutionResult result = run_simgrid(ring_allreduce(ranks, bytes, options), sg);
      CHECK(result.payload_checked);
      CHECK(result.payload_ok);
      CHECK(result.payload_max_abs_error == 0.0);
    }
  }
}

TEST_CASE("real-payload mode catches a schedule that reduces twice") {
  AlgorithmOptions options;
  options.element_bytes = 4;
  const Schedule base = ring_allreduce(4, 4000, options);
  auto ops = dtsim::test::ops_by_rank(base);
  ops[3].push_back(dtsim::test::step_start(Op::send(0, 1)));
  ops[0].push_back(dtsim::test::step_start(Op::recv_reduce(3, 1)));
  SimGridOptions sg;
  sg.real_payload = true;
  const ExecutionResult result = run_simgrid(dtsim::test::with_ops(base, ops), sg);
  CHECK(result.payload_checked);
  CHECK_FALSE(result.payload_ok);
  CHECK(result.payload_max_abs_error > 0.0);
}

TEST_CASE("executors refuse malformed schedules and report deadlocks") {
  auto ops = dtsim::test::ops_by_rank(ring_allreduce(3, 3000));
  ops[0].push_back(dtsim::test::step_start(Op::recv_copy(1, 0)));
  const Schedule deadlocked = dtsim::test::with_ops(ring_allreduce(3, 3000), ops);
  CHECK_THROWS_WITH(run_analytical(deadlocked, AnalyticalOptions{}), Catch::Contains("deadlock"));
  CHECK_THROWS_WITH(run_simgrid(deadlocked, SimGridOptions{}), Catch::Contains("deadlock: 3 ranks never finished") ||
                                                                   Catch::Contains("deadlock: 1 ranks never finished"));
  ops[0].push_back(dtsim::test::step_start(Op::send(9, 0)));
  const Schedule malformed = dtsim::test::with_ops(ring_allreduce(3, 3000), ops);
  CHECK_THROWS_AS(run_simgrid(malformed, SimGridOptions{}), std::invalid_argument);
}

TEST_CASE("compute ops overlap the step's transfers and delay the step when longer, on both executors") {
  // rank 0: step 1 computes 2e9 flops while sending 1 MB to rank 1; step 2 receives it back.
  ScheduleBuilder builder(Collective::allreduce, "hand-made", 2, 1000000, split_even(1000000, 1, 1));
  const std::uint32_t work = builder.add_compute(2e9);
  builder.begin_rank(0);
  builder.begin_step();
  builder.add(Op::compute(work));
  builder.add(Op::send(1, 0));
  builder.begin_step();
  builder.add(Op::recv_copy(1, 0));
  builder.begin_rank(1);
  builder.begin_step();
  builder.add(Op::recv_reduce(0, 0));
  builder.begin_step();
  builder.add(Op::send(0, 0));
  const Schedule s = builder.finish();

  const AlphaBetaGamma cost = make_cost(1e-6, 1e9, 1e10);
  const double transfer = 1e-6 + 1e6 / 1e9;
  for (const double flops_per_s : {1e12, 1e11}) {
    CAPTURE(flops_per_s);
    const double compute = 2e9 / flops_per_s;
    // rank 1's reduction (1e6 / 1e10 s) runs after the first transfer; rank 0 posts step 2 after compute and transfer
    const double rank1_step2 = transfer + 1e6 / 1e10;
    const double expected = std::max(std::max(compute, transfer), rank1_step2) + transfer;
    AnalyticalOptions an;
    an.cost = cost;
    an.compute_flops_per_s = flops_per_s;
    SimGridOptions sg;
    sg.cost = cost;
    sg.compute_flops_per_s = flops_per_s;
    CHECK(rel_diff(run_analytical(s, an).time_s, expected) < 1e-9);
    CHECK(rel_diff(run_simgrid(s, sg).time_s, expected) < 1e-9);
  }
}

TEST_CASE("eager sends start before their receive is posted, rendezvous ones wait for it") {
  // 3 ranks, chunks of 1 MB: ranks 0 and 1 each send a chunk to rank 2 at once; rank 2 receives rank 1's chunk in
  // its first step and rank 0's only in its second. Rendezvous: 1 -> 2 runs alone, then 0 -> 2 (rank 1 done after
  // one transfer time). Eager: both start at once and share rank 2's link, so rank 1's send ends only after two.
  Schedule s = ring_allreduce(3, 3000000);
  using test::step_start;
  s = test::with_ops(s, {{step_start(Op::send(2, 0))},
                         {step_start(Op::send(2, 1))},
                         {step_start(Op::recv_copy(1, 1)), step_start(Op::recv_copy(0, 0))}});
  SimGridOptions rendezvous;
  rendezvous.cost.alpha_s = 0;
  SimGridOptions eager = rendezvous;
  eager.eager = true;
  const ExecutionResult r = run_simgrid(s, rendezvous);
  const ExecutionResult e = run_simgrid(s, eager);
  const double one = 1e6 / rendezvous.cost.bandwidth_Bps;
  CHECK(r.rank_finish_s[1] == Approx(one).epsilon(1e-6));
  CHECK(r.rank_finish_s[0] == Approx(2 * one).epsilon(1e-6));
  CHECK(e.rank_finish_s[1] == Approx(2 * one).epsilon(1e-6));
  CHECK(e.rank_finish_s[0] == Approx(2 * one).epsilon(1e-6));
  CHECK(e.time_s == Approx(r.time_s).epsilon(1e-6));
}

TEST_CASE("the receiver-ready handshake adds one latency per step and keeps early senders off a busy link") {
  // dtsim-mpi-run's protocol: each receive first sends an empty ready message, each send waits for it.
  SimGridOptions rendezvous;
  rendezvous.cost.alpha_s = 1e-3;
  SimGridOptions handshake = rendezvous;
  handshake.ready_handshake = true;
  const int ranks = 4;
  const Schedule ring = ring_allreduce(ranks, 4000000);
  const double steps = 2.0 * (ranks - 1);
  CHECK(run_simgrid(ring, handshake).time_s ==
        Approx(run_simgrid(ring, rendezvous).time_s + steps * rendezvous.cost.alpha_s).epsilon(1e-9));

  // the schedule of the eager test above: rank 0's chunk must wait for rank 2's second step, as with rendezvous
  using test::step_start;
  const Schedule s =
      test::with_ops(ring_allreduce(3, 3000000), {{step_start(Op::send(2, 0))},
                                                  {step_start(Op::send(2, 1))},
                                                  {step_start(Op::recv_copy(1, 1)), step_start(Op::recv_copy(0, 0))}});
  handshake.cost.alpha_s = 0;
  rendezvous.cost.alpha_s = 0;
  const ExecutionResult h = run_simgrid(s, handshake);
  const double one = 1e6 / handshake.cost.bandwidth_Bps;
  CHECK(h.rank_finish_s[1] == Approx(one).epsilon(1e-6));
  CHECK(h.rank_finish_s[0] == Approx(2 * one).epsilon(1e-6));
}

TEST_CASE("a send buffer lets the tail of a rank's send overlap its next send to another receiver") {
  // Binomial broadcast of 4 MB from rank 0 on 4 ranks, with the ready handshake, no latency; u = 1 MB on a link.
  //   Held (no buffer): 0 -> 2 (4u), then 0 -> 1 and 2 -> 3 at once: 8u.
  //   1 MB buffered: 0 -> 2's first 3 MB alone (3u); its last MB then shares rank 0's link with 0 -> 1's first 3 MB,
  //   so rank 2 has everything at 5u and forwards it to rank 3 by 9u; rank 1 (2 MB left at 5u, then its last MB) at 8u.
  //   All buffered (8 MB): 0 -> 2 and 0 -> 1 share rank 0's link from the start (both done at 8u), then 2 -> 3: 12u.
  const Schedule s = binomial_broadcast(4, 4000000);
  SimGridOptions held;
  held.cost.alpha_s = 0;
  held.ready_handshake = true;
  SimGridOptions some = held;
  some.send_buffer_bytes = 1000000;
  SimGridOptions all = held;
  all.send_buffer_bytes = 8000000;
  const double u = 1e6 / held.cost.bandwidth_Bps;
  CHECK(run_simgrid(s, held).time_s == Approx(8 * u).epsilon(1e-6));
  const ExecutionResult b = run_simgrid(s, some);
  CHECK(b.time_s == Approx(9 * u).epsilon(1e-6));
  CHECK(b.rank_finish_s[2] == Approx(9 * u).epsilon(1e-6));  // a rank is done when its tails have arrived
  CHECK(b.rank_finish_s[1] == Approx(8 * u).epsilon(1e-6));
  CHECK(run_simgrid(s, all).time_s == Approx(12 * u).epsilon(1e-6));
  // real payloads arrive whole and in order through heads and tails
  SimGridOptions payload = some;
  payload.real_payload = true;
  CHECK(run_simgrid(binomial_broadcast(4, 4000000, AlgorithmOptions{4}), payload).payload_ok);
  CHECK(run_simgrid(ring_allreduce(4, 4000000, AlgorithmOptions{4}), payload).payload_ok);
  // a ring sends to one peer only, whose receive needs the whole message: without latency the buffer changes nothing
  const Schedule ring = ring_allreduce(4, 4000000);
  CHECK(run_simgrid(ring, some).time_s == Approx(run_simgrid(ring, held).time_s).epsilon(1e-6));
}

TEST_CASE("with an older send weight, a message already on its way keeps that many times a newer one's share") {
  // The broadcast above with weight 2 (units u as there).
  //   All buffered: 0 -> 2 (written first) gets 2/3 of rank 0's link, 0 -> 1 1/3: rank 2 has its 4 MB at 6u, rank 1
  //   its first 2 MB then and the rest by 8u; 2 -> 3 (rank 2's first message) takes 4u more: 10u (12u when fair).
  //   1 MB buffered: 0 -> 2's head alone (3u), then its tail at 2/3 with 0 -> 1 at 1/3: rank 2 done at 4.5u, forwards
  //   3 MB held and 1 MB buffered by 8.5u; 0 -> 1 has 0.5 MB at 4.5u, then alone: its last byte at 8u (9u fair).
  const Schedule s = binomial_broadcast(4, 4000000);
  SimGridOptions all;
  all.cost.alpha_s = 0;
  all.ready_handshake = true;
  all.send_buffer_bytes = 8000000;
  all.older_send_weight = 2;
  SimGridOptions some = all;
  some.send_buffer_bytes = 1000000;
  const double u = 1e6 / all.cost.bandwidth_Bps;
  const ExecutionResult a = run_simgrid(s, all);
  CHECK(a.rank_finish_s[2] == Approx(10 * u).epsilon(1e-6));  // done when its own buffered send to 3 has arrived
  CHECK(a.rank_finish_s[1] == Approx(8 * u).epsilon(1e-6));
  CHECK(a.time_s == Approx(10 * u).epsilon(1e-6));
  const ExecutionResult b = run_simgrid(s, some);
  CHECK(b.rank_finish_s[3] == Approx(8.5 * u).epsilon(1e-6));
  CHECK(b.rank_finish_s[1] == Approx(8 * u).epsilon(1e-6));
  // weight 1 is fair sharing, as without the option; payloads stay whole through the parts
  SimGridOptions fair = all;
  fair.older_send_weight = 1;
  CHECK(run_simgrid(s, fair).time_s == Approx(12 * u).epsilon(1e-6));
  SimGridOptions payload = some;
  payload.real_payload = true;
  CHECK(run_simgrid(binomial_broadcast(4, 4000000, AlgorithmOptions{4}), payload).payload_ok);
  CHECK(run_simgrid(ring_allreduce(4, 4000000, AlgorithmOptions{4}), payload).payload_ok);
  SimGridOptions bad = all;
  bad.older_send_weight = 0;
  CHECK_THROWS_WITH(run_simgrid(s, bad), Catch::Contains("older_send_weight must be in [1, 16], got 0"));
}

TEST_CASE("per-message gaps: a step of n sends keeps its rank busy (n-1) g on every executor, one send costs none") {
  // direct on a star of 8 ranks: each phase sends and receives 7 messages, so with g = 10 us each phase lasts 6 g
  // (far above alpha and the bytes), then the reduce-scatter phase reduces its 7 incoming chunks
  const int ranks = 8;
  const std::uint64_t bytes = 8 * 1024;
  AlphaBetaGamma cost = make_cost(1e-6, 1.25e9, 10e9);
  cost.gap_s = 10e-6;
  const double expected = 2 * (ranks - 2) * cost.gap_s + cost.reduce_seconds(bytes * (ranks - 1) / ranks);
  const Schedule direct = find_algorithm("direct").build(ranks, bytes, AlgorithmOptions{});
  AnalyticalOptions an;
  an.cost = cost;
  SimGridOptions sg;
  sg.cost = cost;
  FlowOptions fo;
  fo.cost = cost;
  CHECK(rel_diff(run_analytical(direct, an).time_s, expected) < 1e-9);
  CHECK(rel_diff(direct_allreduce_seconds(ranks, bytes, cost), expected) < 1e-9);  // the closed form too
  CHECK(rel_diff(run_simgrid(direct, sg).time_s, expected) < 1e-9);
  const ExecutionResult lumped = run_flow(direct, fo);
  CHECK(lumped.rank_classes > 0);  // the star's ranks run alike: one class
  CHECK(rel_diff(lumped.time_s, expected) < 1e-9);
  fo.lump_ranks = false;
  CHECK(rel_diff(run_flow(direct, fo).time_s, expected) < 1e-9);

  // a ring sends and receives one message a step: the gap changes nothing
  const Schedule ring = find_algorithm("ring").build(ranks, bytes, AlgorithmOptions{});
  SimGridOptions no_gap = sg;
  no_gap.cost.gap_s = 0;
  CHECK(run_simgrid(ring, sg).time_s == run_simgrid(ring, no_gap).time_s);
  AnalyticalOptions an_no_gap = an;
  an_no_gap.cost.gap_s = 0;
  CHECK(run_analytical(ring, an).time_s == run_analytical(ring, an_no_gap).time_s);
  // and a gap shorter than the transfers hides behind them
  AlphaBetaGamma small = cost;
  small.gap_s = 1e-9;
  an.cost = small;
  an_no_gap.cost = small;
  an_no_gap.cost.gap_s = 0;
  const Schedule big = find_algorithm("direct").build(ranks, 8 << 20, AlgorithmOptions{});
  CHECK(run_analytical(big, an).time_s == run_analytical(big, an_no_gap).time_s);
}

TEST_CASE("per-message gaps: a parameter server's incast costs its server a gap per further worker") {
  // 7 workers and a server host of its own: the server receives 7 messages (6 g), then sends 7 (6 g more); the workers
  // send and receive one each, so the server's two steps set the time
  const int workers = 7;
  AlphaBetaGamma cost = make_cost(1e-6, 1e12, 1e15);  // bytes and reductions nearly free
  cost.gap_s = 5e-6;
  AlgorithmOptions options;
  options.set("servers", 1);
  const Schedule ps = find_algorithm("ps").build(workers, 700, options);
  REQUIRE(ps.ranks == workers + 1);
  AnalyticalOptions an;
  an.cost = cost;
  const ExecutionResult r = run_analytical(ps, an);
  CHECK(r.time_s == Approx(2 * (workers - 1) * cost.gap_s).epsilon(1e-3));
  CHECK(rel_diff(parameter_server_seconds(workers, 700, cost, 1, false), r.time_s) < 1e-9);
  SimGridOptions sg;
  sg.cost = cost;
  CHECK(rel_diff(run_simgrid(ps, sg).time_s, r.time_s) < 1e-6);
}
