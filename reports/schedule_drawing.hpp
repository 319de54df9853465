// Pictures of a collective, drawn from its Schedule (never by hand per algorithm): one panel per round
// (algorithms/schedule_rounds.hpp), the ranks placed as the algorithm suggests, an arrow per transfer labelled with
// its chunk and bytes, each rank's buffer as its chunks coloured by how many contributions they hold (so a
// reduce-scatter visibly fills and an allgather visibly spreads), and, given a value per rank, the partial sums as
// they travel. As SVG (the panels in a grid) or as self-contained HTML (one panel at a time: previous, next, play).
// Every arrow and chunk carries data attributes (round, source, destination, span, bytes; rank, chunk, contributions)
// so that tests read the picture back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "algorithms/schedule.hpp"
#include "algorithms/schedule_rounds.hpp"

namespace dtsim {

enum class DrawLayout : std::uint8_t {
  circle,     // ring, Bruck, direct: ranks around a circle
  tree,       // trees: rows by distance from the root in the transfer graph
  hypercube,  // recursive doubling and halving: a power of two as a grid by the rank's bits
  hub,        // parameter server: the servers in the middle, the workers around
  nodes,      // hierarchical, NVLS, SHARP: ranks in boxes of ranks_per_node
};
const char* to_string(DrawLayout layout);
// The layout an algorithm suggests.
DrawLayout layout_for(const std::string& algorithm, int ranks);

struct RoundTime {
  double start_s = 0;
  double end_s = 0;
};

struct DrawingRequest {
  std::string title;  // e.g. "tree allreduce, 7 ranks, 4 B"
  DrawLayout layout = DrawLayout::circle;
  int ranks_per_node = 0;        // nodes layout (0: about sqrt(ranks))
  int root = 0;                  // tree layout
  std::vector<double> values;    // one per rank: each chunk shows the sum of the values it holds (empty: colours only)
  std::vector<RoundTime> times;  // one per round, from an executor (empty: not timed)
  std::string timed_by;          // e.g. "SimGrid, star 10 Gbit/s, 1 us"
};

// The largest picture drawn rank by rank.
inline constexpr int max_drawn_ranks = 64;

std::string schedule_svg(const Schedule& schedule, const ScheduleRounds& rounds, const DrawingRequest& request);
std::string schedule_html(const Schedule& schedule, const ScheduleRounds& rounds, const DrawingRequest& request);
// Beyond max_drawn_ranks: per round, the transfers and bytes, and how full the buffers are (the share of the final
// contributions held), as charts.
std::string schedule_summary_svg(const Schedule& schedule, const ScheduleRounds& rounds, const DrawingRequest& request);

}  // namespace dtsim
