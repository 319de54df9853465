#include "reports/palette.hpp"

#include <array>
#include <span>
#include <utility>

namespace dtsim {

namespace {

using Named = std::pair<std::string_view, std::string_view>;

// compare's default six (ring, tree, butterfly, rabenseifner, ps, direct) take Okabe and Ito's blue, orange, bluish
// green, vermillion, reddish purple and black; the others the rest. Only the rarely used pipelined tree is a second
// blue (ring and direct, or ring and rabenseifner, looked alike in two blues).
constexpr std::array<Named, 13> algorithm_colours{{
    {"ring", "#0072B2"},            // Okabe-Ito blue
    {"tree", "#E69F00"},            // orange
    {"butterfly", "#009E73"},       // bluish green
    {"rabenseifner", "#D55E00"},    // vermillion
    {"ps", "#CC79A7"},              // reddish purple
    {"direct", "#000000"},          // black
    {"hierarchical", "#882255"},    // Tol's wine
    {"dbtree", "#999933"},          // Tol's olive
    {"pipelined-tree", "#56B4E9"},  // sky blue
    {"chain-dbtree", "#332288"},    // Tol's indigo
    {"nvls", "#DDAA33"},            // Tol's high-contrast yellow
    {"sharp", "#BB5566"},           // Tol's high-contrast red
    {"nvls-tree", "#004488"},       // Tol's high-contrast blue
}};

constexpr std::array<Named, 5> step_parts{{
    {"forward", "#56B4E9"},
    {"backward", "#0072B2"},
    {"exposed communication", "#D55E00"},
    {"input stall", "#E69F00"},
    {"optimizer", "#999999"},
}};

// For other series (training runs, unknown algorithms): Tol's muted colours not taken above, then greys.
constexpr std::array<std::string_view, 7> others{"#44AA99", "#AA4499", "#117733", "#88CCEE",
                                                 "#DDCC77", "#CC6677", "#4D4D4D"};

// For many categories: the first 7 are told apart in every common colour vision deficiency, the rest add hue and
// lightness steps that stay apart from them (a point's tooltip names its category where two look alike).
constexpr std::array<std::string_view, 16> categories{
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#000000", "#56B4E9",                         // Okabe-Ito
    "#332288", "#117733", "#999933", "#882255", "#AA4499", "#44AA99", "#DDCC77", "#CC6677", "#888888"};  // Tol muted

std::optional<std::string_view> find(std::span<const Named> table, std::string_view name) {
  for (const auto& [key, colour] : table) {
    if (key == name) return colour;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> algorithm_colour(std::string_view algorithm) {
  return find(algorithm_colours, algorithm);
}

std::optional<std::string_view> step_part_colour(std::string_view part) { return find(step_parts, part); }

std::string SeriesColours::colour(const std::string& name) {
  if (const auto c = algorithm_colour(name)) return std::string(*c);
  if (const auto c = step_part_colour(name)) return std::string(*c);
  const auto it = others_.find(name);
  if (it != others_.end()) return it->second;
  const std::string c(others[others_.size() % others.size()]);
  others_.emplace(name, c);
  return c;
}

std::string SeriesColours::category_colour(const std::string& name) {
  const auto it = categories_.find(name);
  if (it != categories_.end()) return it->second;
  const std::string c(categories[categories_.size() % categories.size()]);
  categories_.emplace(name, c);
  return c;
}

}  // namespace dtsim
