// Adding an allreduce is writing its builder (with its closed form and options) and registering it: a throwaway one,
// registered here at run time with no other edit, is found and listed by name, built, proven by the verifier, timed by
// the analytical, flow and SimGrid executors, nested by the hierarchical allreduce, and given its CLI flag, which is
// parsed, checked and refused for other algorithms from its spec alone.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/verifier.hpp"
#include "cli/algorithm_flags.hpp"
#include "rel_diff.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/simgrid_executor.hpp"

using namespace dtsim;

namespace {

// --test-rounds K: the buffer moves in K chunks, one step each.
constexpr OptionSpec rounds_option{.name = "test-rounds",
                                   .kind = OptionKind::count,
                                   .value_form = "K",
                                   .default_text = "1",
                                   .default_number = 1,
                                   .min = 1,
                                   .max = 8,
                                   .doc = "steps the exchange is split into, 1 to 8",
                                   .used_for = "splits its exchange"};
constexpr std::array<OptionSpec, 1> direct_copy_options{rounds_option};

// "test-direct-copy": in each of K steps every rank sends chunk k of its buffer to every other rank and adds the
// chunk k it receives from each.
Schedule direct_copy_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("test-direct-copy", ranks);
  const auto k = static_cast<std::uint32_t>(options.number(rounds_option));
  ScheduleBuilder builder(Collective::allreduce, "test-direct-copy", ranks, bytes,
                          buffer_chunks(bytes, k, options.element_bytes));
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (p == 1 || bytes == 0) continue;
    for (std::uint32_t chunk = 0; chunk < k; ++chunk) {
      builder.begin_step();
      for (std::uint32_t q = 0; q < p; ++q) {
        if (q == r) continue;
        builder.add(Op::send(static_cast<int>(q), chunk));
        builder.add(Op::recv_reduce(static_cast<int>(q), chunk));
      }
    }
  }
  return builder.finish();
}

// Without contention, K divides n: K (alpha + n/K beta) + (P-1) n gamma.
double direct_copy_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                           const AlgorithmOptions& options) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const auto k = static_cast<double>(options.number(rounds_option));
  const double n = static_cast<double>(bytes);
  return k * cost.alpha_s + n / cost.bandwidth_Bps + (ranks - 1.0) * n / cost.reduce_Bps;
}

constexpr AlgorithmInfo direct_copy{"test-direct-copy",     Collective::allreduce, "every rank sends its buffer to all",
                                    &direct_copy_allreduce, &direct_copy_seconds,  direct_copy_options};

// Registered for the scope of a test, so that the tests that go over every algorithm do not meet it.
struct Registration {
  explicit Registration(const AlgorithmInfo& info) : entry(register_algorithm(info)) {}
  ~Registration() { unregister_algorithm(entry.name, entry.collective); }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
  const AlgorithmInfo& entry;
};

cli::Flags parse(const std::vector<cli::FlagSpec>& specs, std::vector<std::string> words) {
  static std::vector<std::vector<std::string>> kept;  // the Flags keep views of the arguments
  kept.push_back(std::move(words));
  static std::vector<std::vector<char*>> pointers;
  pointers.emplace_back();
  for (std::string& w : kept.back())
    pointers.back().push_back(w.data());
  return cli::Flags(specs, pointers.back());
}

}  // namespace

TEST_CASE("a throwaway allreduce registered at run time works everywhere with no other edit") {
  const std::size_t before = algorithms().size();
  {
    const Registration registered(direct_copy);
    // the registry: by name, in the lists, and nestable (no helper ranks, nothing nested)
    CHECK(algorithms().size() == before + 1);
    CHECK(&find_algorithm("test-direct-copy") == &registered.entry);
    CHECK(algorithm_names().ends_with(", hierarchical, nvls, nvls-tree, sharp, test-direct-copy"));
    CHECK(&find_nestable_allreduce("test-direct-copy") == &registered.entry);
    CHECK(nestable_allreduce_names().ends_with(", direct, nvls, nvls-tree, sharp, test-direct-copy"));
    CHECK(algorithms_declaring("test-rounds") == std::vector<const AlgorithmInfo*>{&registered.entry});

    AlphaBetaGamma cost;
    cost.alpha_s = 4e-6;
    cost.gap_s = 0;
    for (std::uint64_t rounds : {1U, 4U}) {
      AlgorithmOptions options;
      options.set("test-rounds", rounds);
      for (int ranks : {1, 2, 3, 5, 8}) {
        for (std::uint64_t bytes : {0ULL, 1ULL, 999ULL, 400000ULL}) {
          CAPTURE(rounds, ranks, bytes);
          const Schedule s = registered.entry.build(ranks, bytes, options);
          const VerifyReport report = verify(s);
          CAPTURE(report.error);
          CHECK(report.ok);
        }
        CAPTURE(rounds, ranks);
        const Schedule s = find_algorithm("test-direct-copy").build(ranks, 400000, options);
        AnalyticalOptions an;
        an.cost = cost;
        const double formula = registered.entry.closed_form_seconds(ranks, 400000, cost, options);
        CHECK(rel_diff(run_analytical(s, an).time_s, formula) < 1e-9);
        // on one link per host the P-1 copies share it: flow and SimGrid agree on that
        FlowOptions fo;
        fo.cost = cost;
        fo.pad_chunks_within = 0;
        fo.pad_chunks_bytes = 0;
        SimGridOptions sg;
        sg.cost = cost;
        const ExecutionResult flow = run_flow(s, fo), simgrid = run_simgrid(s, sg);
        CHECK(rel_diff(flow.time_s, simgrid.time_s) < 1e-6);
        CHECK(flow.messages == simgrid.messages);
        CHECK(flow.bytes_sent == simgrid.bytes_sent);
        CHECK(flow.time_s >= formula * (1 - 1e-9));
      }
    }

    // nested as the hierarchical allreduce's --inter, reading its own option from the same options
    AlgorithmOptions nested;
    nested.set("ranks-per-node", 2);
    nested.set("inter", "test-direct-copy");
    nested.set("test-rounds", 2);
    const AlgorithmInfo& hierarchical = find_algorithm("hierarchical");
    const Schedule h = hierarchical.build(8, 400000, nested);
    CHECK(verify(h).ok);
    AnalyticalOptions an;
    an.cost = cost;
    CHECK(rel_diff(run_analytical(h, an).time_s, hierarchical.closed_form_seconds(8, 400000, cost, nested)) < 1e-9);

    // the CLI's edge: its flag, documented, parsed within its range, refused for the algorithms that do not read it
    const std::vector<cli::FlagSpec> specs = cli::algorithm_option_flags();
    const auto flag =
        std::find_if(specs.begin(), specs.end(), [](const cli::FlagSpec& f) { return f.name == "test-rounds"; });
    REQUIRE(flag != specs.end());
    CHECK(flag->doc == "test-direct-copy: steps the exchange is split into, 1 to 8");
    CHECK(flag->default_value == "1");
    CHECK(cli::algorithm_flag_doc().starts_with(
        "allreduce: ring, tree, pipelined-tree, dbtree, chain-dbtree, "
        "butterfly, rabenseifner, ps, direct, hierarchical, nvls, nvls-tree, sharp, test-direct-copy; "));
    const cli::Flags three = parse(specs, {"--test-rounds", "3"});
    CHECK(cli::parse_algorithm_options(three).number(rounds_option) == 3);
    CHECK_NOTHROW(cli::check_option_flags(three, std::array{&registered.entry}));
    CHECK_THROWS_WITH(cli::parse_algorithm_options(parse(specs, {"--test-rounds", "9"})),
                      Catch::StartsWith("--test-rounds: "));
    CHECK_THROWS_WITH(
        cli::check_option_flags(three, std::array{&find_algorithm("ring")}),
        "--test-rounds: only the test-direct-copy allreduce (also as hierarchical's --inter) splits its exchange "
        "(the chosen algorithm: ring)");
    // as hierarchical's --inter its option is read; with another inner allreduce it is refused
    const AlgorithmInfo* outer[] = {&hierarchical};
    CHECK_NOTHROW(cli::check_option_flags(parse(specs, {"--inter", "test-direct-copy", "--test-rounds", "3"}), outer));
    CHECK_THROWS_AS(cli::check_option_flags(three, outer), cli::UsageError);
    // the other algorithms' flags are refused for it
    CHECK_THROWS_WITH(cli::check_option_flags(parse(specs, {"--servers", "2"}), std::array{&registered.entry}),
                      "--servers: only the ps allreduce has parameter servers (the chosen algorithm: "
                      "test-direct-copy)");

    // one name per collective, one meaning per option name
    CHECK_THROWS_WITH(register_algorithm(direct_copy), "allreduce algorithm 'test-direct-copy' is already registered");
    constexpr OptionSpec other_segments{.name = "segment-size", .kind = OptionKind::count, .default_number = 7};
    constexpr std::array<OptionSpec, 1> clashing{other_segments};
    CHECK_THROWS_WITH(
        register_algorithm({"test-clash", Collective::allreduce, "", &direct_copy_allreduce, nullptr, clashing}),
        Catch::Contains("its option 'segment-size' differs from pipelined-tree's"));
    // an option that no registered algorithm declares is a programming error, not silently ignored
    AlgorithmOptions misspelt;
    misspelt.set("test-round", 2);
    CHECK_THROWS_AS(registered.entry.build(4, 100, misspelt), std::logic_error);
  }
  CHECK(algorithms().size() == before);
  CHECK_THROWS_AS(find_algorithm("test-direct-copy"), std::invalid_argument);
  CHECK_THROWS_AS(unregister_algorithm("test-direct-copy", Collective::allreduce), std::invalid_argument);
}
