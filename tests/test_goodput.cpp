// The failure, checkpoint and goodput model (models/goodput.hpp): Daly's closed form against a Monte Carlo of the same
// model, the optimal checkpoint interval against Young's and Daly's estimates, and the default failure rates against
// the Llama 3 interruption counts they come from.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "models/goodput.hpp"

using namespace dtsim;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double hour_s = 3600;

struct Stats {
  double mean = 0;
  double standard_error = 0;
};

Stats stats(const std::vector<double>& xs) {
  const double n = static_cast<double>(xs.size());
  const double mean = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  double squares = 0;
  for (double x : xs)
    squares += (x - mean) * (x - mean);
  return {mean, std::sqrt(squares / (n - 1) / n)};
}

// The Monte Carlo's mean must match `expected` within 2% and within 5 standard errors of the mean.
void require_matches(const std::vector<double>& walls, double expected) {
  const Stats s = stats(walls);
  INFO("Monte Carlo mean " << s.mean << " s (standard error " << s.standard_error << "), closed form " << expected);
  REQUIRE(std::abs(s.mean - expected) < 0.02 * expected);
  REQUIRE(std::abs(s.mean - expected) < 5 * s.standard_error);
}

}  // namespace

TEST_CASE("goodput: without failures and checkpoint cost the wall time is the work") {
  const double work_s = 100 * hour_s;
  const RunEstimate free = expected_run(work_s, inf, hour_s, CheckpointCost{});
  REQUIRE(free.wall_s == work_s);
  REQUIRE(free.goodput == 1.0);
  REQUIRE(free.expected_interruptions == 0.0);
  REQUIRE(free.lost_s == 0.0);
  REQUIRE(free.restart_s == 0.0);
  for (double wall_s : sample_runs(work_s, inf, hour_s, CheckpointCost{}, 1, 10))
    REQUIRE(wall_s == work_s);

  // Without failures, checkpoints alone cost (W / tau) delta; restarts cost nothing.
  const RunEstimate writes = expected_run(work_s, inf, hour_s, CheckpointCost{.write_s = 60, .restart_s = 600});
  REQUIRE(writes.wall_s == Approx(work_s + 100 * 60));
  REQUIRE(writes.checkpoint_s == Approx(100 * 60));
  REQUIRE(writes.goodput == Approx(work_s / (work_s + 6000)));
}

TEST_CASE("goodput: the Monte Carlo matches Daly's closed form for exponential failures") {
  const double work_s = 100 * hour_s;
  const double mtbf_s = 10 * hour_s;
  const double interval_s = hour_s;

  SECTION("free checkpoints and restarts: T = M (e^(tau/M) - 1) W / tau") {
    const RunEstimate run = expected_run(work_s, mtbf_s, interval_s, CheckpointCost{});
    REQUIRE(run.wall_s == Approx(mtbf_s * std::expm1(interval_s / mtbf_s) * work_s / interval_s));
    require_matches(sample_runs(work_s, mtbf_s, interval_s, CheckpointCost{}, 42, 20000), run.wall_s);
  }
  SECTION("a checkpoint write and a long restart (that failures also hit)") {
    const CheckpointCost cost{.write_s = 300, .restart_s = 0.2 * mtbf_s};
    const RunEstimate run = expected_run(work_s, mtbf_s, interval_s, cost);
    REQUIRE(run.wall_s == Approx(mtbf_s * std::exp(0.2) * std::expm1(3900 / mtbf_s) * 100));
    REQUIRE(run.work_s + run.checkpoint_s + run.restart_s + run.lost_s == Approx(run.wall_s).epsilon(1e-12));
    REQUIRE(run.checkpoint_s == Approx(100 * 300));
    REQUIRE(run.expected_interruptions == Approx(run.wall_s / mtbf_s));
    REQUIRE(run.goodput == Approx(work_s / run.wall_s));
    require_matches(sample_runs(work_s, mtbf_s, interval_s, cost, 7, 20000), run.wall_s);
  }
  SECTION("an interval that does not divide the work: the last segment is the remainder") {
    const CheckpointCost cost{.write_s = 600, .restart_s = 1200};
    const double x = (interval_s + cost.write_s) / mtbf_s;
    const double last = (0.5 * interval_s + cost.write_s) / mtbf_s;
    const double exact = mtbf_s * std::exp(cost.restart_s / mtbf_s) * (3 * std::expm1(x) + std::expm1(last));
    require_matches(sample_runs(3.5 * interval_s, mtbf_s, interval_s, cost, 3, 20000), exact);
  }
}

TEST_CASE("goodput: the numeric optimal interval beats Young's and Daly's, and Daly's is the closer") {
  const double work_s = 1000 * hour_s;
  auto wall = [&](double interval_s, double mtbf_s, const CheckpointCost& cost) {
    return expected_run(work_s, mtbf_s, interval_s, cost).wall_s;
  };
  auto stationary = [](double tau, double delta, double m) { return std::exp((tau + delta) / m) * (1 - tau / m); };

  SECTION("delta << M: all three agree, Daly's within 1%") {
    const double mtbf_s = 1e5;
    const CheckpointCost cost{.write_s = 60, .restart_s = 300};
    const double best = optimal_interval_s(mtbf_s, cost);
    const double young = young_interval_s(cost.write_s, mtbf_s);
    const double daly = daly_interval_s(cost.write_s, mtbf_s);
    REQUIRE(stationary(best, cost.write_s, mtbf_s) == Approx(1.0).epsilon(1e-5));  // the overhead's d/dtau = 0
    REQUIRE(std::abs(daly - best) < 0.01 * best);
    REQUIRE(std::abs(young - best) < 0.05 * best);
    REQUIRE(wall(best, mtbf_s, cost) <= wall(young, mtbf_s, cost) * (1 + 1e-12));
    REQUIRE(wall(best, mtbf_s, cost) <= wall(daly, mtbf_s, cost) * (1 + 1e-12));
    REQUIRE(wall(best, mtbf_s, cost) < wall(0.5 * best, mtbf_s, cost));
    REQUIRE(wall(best, mtbf_s, cost) < wall(2 * best, mtbf_s, cost));
  }
  SECTION("delta = M / 2: Young's is 40% off and costs more; Daly's stays within 2%") {
    const double mtbf_s = 3 * hour_s;
    const CheckpointCost cost{.write_s = 0.5 * mtbf_s, .restart_s = 0};
    const double best = optimal_interval_s(mtbf_s, cost);
    const double young = young_interval_s(cost.write_s, mtbf_s);
    const double daly = daly_interval_s(cost.write_s, mtbf_s);
    REQUIRE(stationary(best, cost.write_s, mtbf_s) == Approx(1.0).epsilon(1e-5));
    REQUIRE(young == Approx(mtbf_s));
    REQUIRE(std::abs(daly - best) < 0.02 * best);
    REQUIRE(std::abs(young - best) > 0.3 * best);
    REQUIRE(wall(best, mtbf_s, cost) <= wall(daly, mtbf_s, cost) * (1 + 1e-12));
    REQUIRE(wall(young, mtbf_s, cost) > 1.01 * wall(best, mtbf_s, cost));
  }
  SECTION("delta >= 2M: Daly's estimate is M; the optimum stays below M") {
    REQUIRE(daly_interval_s(7200, 3600) == 3600);
    const double best = optimal_interval_s(3600, CheckpointCost{.write_s = 7200});
    REQUIRE(best < 3600);
    REQUIRE(stationary(best, 7200, 3600) == Approx(1.0).epsilon(1e-5));
  }
  SECTION("Daly 2006's figures 3 to 5: delta = 5 min, R = 10 min, M = 24 h, 6 h, 15 min: 117, 57, 9.1 min") {
    const CheckpointCost cost{.write_s = 300, .restart_s = 600};
    REQUIRE(daly_interval_s(300, 24 * hour_s) / 60 == Approx(117).margin(0.5));
    REQUIRE(daly_interval_s(300, 6 * hour_s) / 60 == Approx(57).margin(0.5));
    REQUIRE(daly_interval_s(300, 900) / 60 == Approx(9.1).margin(0.05));
    REQUIRE(optimal_interval_s(24 * hour_s, cost) / 60 == Approx(117).margin(0.5));
    REQUIRE(optimal_interval_s(6 * hour_s, cost) / 60 == Approx(57).margin(0.5));
    REQUIRE(optimal_interval_s(900, cost) / 60 == Approx(9.1).margin(0.1));
  }
  SECTION("tiny checkpoints: the search reaches below 1 s") {
    const double best = optimal_interval_s(1e4, CheckpointCost{.write_s = 1e-6});
    REQUIRE(best < 1.0);
    REQUIRE(best == Approx(young_interval_s(1e-6, 1e4)).epsilon(0.01));
  }
}

TEST_CASE("goodput: the Monte Carlo is reproducible from its seed") {
  const CheckpointCost cost{.write_s = 120, .restart_s = 900};
  const std::vector<double> a = sample_runs(50 * hour_s, 5 * hour_s, hour_s, cost, 12345, 500);
  const std::vector<double> b = sample_runs(50 * hour_s, 5 * hour_s, hour_s, cost, 12345, 500);
  const std::vector<double> c = sample_runs(50 * hour_s, 5 * hour_s, hour_s, cost, 12346, 500);
  REQUIRE(a.size() == 500);
  REQUIRE(a == b);
  REQUIRE(a != c);
  // the samples vary (failures strike at random), and none is shorter than the run without failures
  REQUIRE(std::adjacent_find(a.begin(), a.end(), std::not_equal_to<>()) != a.end());
  for (double wall_s : a)
    REQUIRE(wall_s >= 50 * hour_s + 50 * 120 - 1e-6);
}

TEST_CASE("goodput: bad arguments are refused, naming the argument") {
  using Catch::Matchers::Contains;
  const CheckpointCost ok{.write_s = 60, .restart_s = 60};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_WITH(expected_run(-1, 3600, 600, ok), Contains("work_s"));
  REQUIRE_THROWS_WITH(expected_run(0, 3600, 600, ok), Contains("work_s"));
  REQUIRE_THROWS_WITH(expected_run(3600, 0, 600, ok), Contains("mtbf_s"));
  REQUIRE_THROWS_WITH(expected_run(3600, nan, 600, ok), Contains("mtbf_s"));
  REQUIRE_THROWS_WITH(expected_run(3600, 3600, 0, ok), Contains("interval_s"));
  REQUIRE_THROWS_WITH(expected_run(3600, 3600, inf, ok), Contains("interval_s"));
  REQUIRE_THROWS_WITH(expected_run(3600, 3600, 600, CheckpointCost{.write_s = -1}), Contains("write_s"));
  REQUIRE_THROWS_WITH(expected_run(3600, 3600, 600, CheckpointCost{.restart_s = nan}), Contains("restart_s"));
  REQUIRE_THROWS_AS(expected_run(3600, -5, 600, ok), std::invalid_argument);

  REQUIRE_THROWS_WITH(sample_runs(3600, 3600, 600, ok, 1, 0), Contains("samples"));
  REQUIRE_THROWS_WITH(sample_runs(3600, 3600, 600, ok, 1, -3), Contains("samples"));
  REQUIRE_THROWS_WITH(sample_runs(-3600, 3600, 600, ok, 1, 10), Contains("work_s"));
  REQUIRE_THROWS_WITH(sample_runs(1e9, inf, 1, ok, 1, 1), Contains("segments"));  // 1e9 checkpoints per sample
  // a run of 1e6 s, failing every second: about e^600 failures expected, refused before any sampling
  REQUIRE_THROWS_WITH(sample_runs(1e6, 1, 600, ok, 1, 1), Contains("failures expected"));
  REQUIRE_THROWS_AS(sample_runs(1e6, 1, 600, ok, 1, 1), std::invalid_argument);

  REQUIRE_THROWS_WITH(young_interval_s(0, 3600), Contains("write_s"));
  REQUIRE_THROWS_WITH(daly_interval_s(60, inf), Contains("mtbf_s"));
  REQUIRE_THROWS_WITH(optimal_interval_s(inf, ok), Contains("mtbf_s"));
  REQUIRE_THROWS_WITH(optimal_interval_s(3600, CheckpointCost{}), Contains("write_s"));
  REQUIRE_THROWS_WITH(checkpoint_write_s(1e9, 0), Contains("write_Bps"));
  REQUIRE_THROWS_WITH(checkpoint_write_s(-1, 1e9), Contains("bytes"));
  REQUIRE_THROWS_WITH(failures_per_hour(FailureRates{}, ComponentCounts{.gpus = -8}), Contains("gpus"));
  REQUIRE_THROWS_WITH(failures_per_hour(FailureRates{.nic_per_h = nan}, llama3_counts), Contains("nic_per_h"));
}

TEST_CASE("goodput: the default failure rates reproduce Llama 3's 419 interruptions in 54 days") {
  const FailureRates rates;
  const double hours = 54.0 * 24.0;
  REQUIRE(failures_per_hour(rates, llama3_counts) * hours == Approx(419).epsilon(1e-12));
  // by kind, as Table 5's causes were mapped: GPU 268, node (host and software) 109, NIC 7, switch/cable 35
  REQUIRE(rates.gpu_per_h * 16384 * hours == Approx(268));
  REQUIRE(rates.node_per_h * 2048 * hours == Approx(109));
  REQUIRE(rates.nic_per_h * 16384 * hours == Approx(7));
  REQUIRE(rates.link_per_h * 16384 * hours == Approx(35));
  REQUIRE(rates.switch_per_h == 0.0);
  // "one failure every three hours" (Meta's summary): 1,296 h / 419 = 3.09 h
  REQUIRE(mtbf_s(rates, llama3_counts) / hour_s == Approx(3.093).epsilon(1e-3));
  // a 1/16 slice of the cluster fails 16 times less often; nothing fails when there is nothing
  const ComponentCounts slice{.gpus = 1024, .nodes = 128, .nics = 1024, .links = 1024, .switches = 64};
  REQUIRE(failures_per_hour(rates, slice) * 16 == Approx(failures_per_hour(rates, llama3_counts)));
  REQUIRE(mtbf_s(rates, ComponentCounts{}) == inf);
  REQUIRE(checkpoint_write_s(4e12, 2e12) == 2.0);
}
