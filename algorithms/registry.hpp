// The algorithms users can name, one entry each: its name, collective and summary, its schedule builder (a pure
// function (ranks, bytes, options) -> Schedule), its closed form where it has one, and the options it declares. The
// CLI's algorithm and option flags, compare, predict, validate and the closed forms all take their names from here.
// Adding an algorithm: its own files and one line in registry.cpp (docs/design.md, "Adding an allreduce").
#pragma once

#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/direct.hpp"
#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"

namespace dtsim {

using BuildSchedule = Schedule (*)(int ranks, std::uint64_t bytes, const AlgorithmOptions& options);
// An all-pairs algorithm's steps without its P x P operations (algorithms/direct.hpp).
using BuildAllPairs = AllPairs (*)(int ranks, std::uint64_t bytes, const AlgorithmOptions& options);
// Seconds on a star of `cost` without contention (the alpha-beta-gamma closed form).
using ClosedForm = double (*)(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                              const AlgorithmOptions& options);

struct AlgorithmInfo {
  std::string_view name{};
  Collective collective = Collective::allreduce;
  std::string_view summary{};
  BuildSchedule make_schedule = nullptr;
  ClosedForm closed_form = nullptr;            // none: the algorithm has no closed form
  std::span<const OptionSpec> option_specs{};  // the options it reads (and, for an allreduce kind, its inner one's)
  bool helper_ranks = false;                   // may add ranks beyond the participants (ps's servers of their own)
  bool switch_helpers = false;                 // its helpers run inside a switch (nvls): collectives only, not steps
  // Its steps as all pairs (direct): the flow executor may run it without writing its P x P operations
  BuildAllPairs all_pairs = nullptr;

  // Builds the schedule. Throws std::logic_error when `options` sets an option no registered algorithm declares (a
  // misspelt name), and whatever make_schedule throws (OptionError for an option value it cannot use).
  Schedule build(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) const;
  // Its steps as all pairs (all_pairs), or nothing when it has no such form or cannot take these arguments (build then
  // says why).
  std::optional<AllPairs> pairs(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) const;
  // The closed form's seconds, or a negative value when the algorithm has none.
  double closed_form_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                             const AlgorithmOptions& options = {}) const;
  // The option of that name the algorithm declares, or nullptr.
  const OptionSpec* option(std::string_view option_name) const;
  // Whether it can run inside another algorithm (hierarchical's --inter): an allreduce on exactly the ranks it is
  // given (no helper ranks, or helpers in switches: sharp) that does not nest one itself (no option of kind allreduce).
  bool nestable() const;
};

// A closed form that needs no options, as an entry's ClosedForm: &without_options<ring_allreduce_seconds>.
template <double (*Seconds)(int, std::uint64_t, const AlphaBetaGamma&)>
double without_options(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, const AlgorithmOptions&) {
  return Seconds(ranks, bytes, cost);
}

// Every registered algorithm, of every collective, in registration order (the built-in ones first). References stay
// valid while the algorithm stays registered.
const std::deque<AlgorithmInfo>& algorithms();
// Throws std::invalid_argument naming the accepted algorithms when `name` is unknown for the collective.
const AlgorithmInfo& find_algorithm(std::string_view name, Collective collective = Collective::allreduce);
std::string algorithm_names(Collective collective = Collective::allreduce);  // "ring, ..." for messages
// Throws std::invalid_argument naming the accepted collectives.
Collective parse_collective(std::string_view name);
// An algorithm named as "ALGORITHM" (an allreduce) or "COLLECTIVE/ALGORITHM" (e.g. "all-to-all/direct"), as the
// validation cases name them; throws as find_algorithm and parse_collective do.
const AlgorithmInfo& find_qualified_algorithm(std::string_view name);

// The allreduces that can run inside another ("ring, tree, ..."), and one of them by name: throws
// std::invalid_argument for an unknown name (as find_algorithm) or one that cannot nest.
std::string nestable_allreduce_names();
const AlgorithmInfo& find_nestable_allreduce(std::string_view name);

// Every option the registered algorithms declare, once each by name, in registration order.
std::vector<const OptionSpec*> declared_options();
// The registered algorithms that declare the option of that name.
std::vector<const AlgorithmInfo*> algorithms_declaring(std::string_view option_name);

// Adds an algorithm (its strings and option specs must outlive the registry: literals, constexpr arrays) and returns
// its entry. Throws std::invalid_argument when the collective already has an algorithm of that name, the entry has
// no builder, or an option it declares has the name of another algorithm's option but differs from it. Not
// thread-safe: register before anything runs concurrently.
const AlgorithmInfo& register_algorithm(const AlgorithmInfo& info);
// Removes an algorithm (tests remove the throwaway ones they register); throws std::invalid_argument when none of
// that name is registered for the collective. References to the others stay valid when it was the last registered
// (as a test's throwaway is), and all become invalid otherwise.
void unregister_algorithm(std::string_view name, Collective collective);

}  // namespace dtsim
