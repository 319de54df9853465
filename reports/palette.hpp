// The colours of the report's charts, in one place. Okabe and Ito's colour-blind-safe palette (without its yellow,
// which is hard to see as a line on white), then two of Paul Tol's muted colours where it runs out: one fixed colour
// per allreduce algorithm, so that an algorithm looks the same in every chart of every report; fixed colours for the
// parts of a training step; and, for any other series, the next unused colour in order of first use.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace dtsim {

// The colour of an allreduce algorithm by name (ring, tree, ...); nullopt for a name that is not one.
std::optional<std::string_view> algorithm_colour(std::string_view algorithm);
// forward, backward, exposed communication, input stall, optimizer; nullopt for another name.
std::optional<std::string_view> step_part_colour(std::string_view part);
// Reference lines (the ideal speedup, prediction = measurement): drawn dashed in this grey.
inline constexpr std::string_view reference_colour = "#666666";

// Colours by series name for one report: an algorithm's or a step part's own, any other name the next colour not
// reserved for those, the same name the same colour each time it is asked.
class SeriesColours {
public:
  std::string colour(const std::string& name);
  // For charts of many categories (a colour per device): 16 colours, Okabe and Ito's (without yellow) then Tol's
  // muted, in order of first use, the same name the same colour each time; the 17th name takes the first again.
  std::string category_colour(const std::string& name);

private:
  std::map<std::string, std::string, std::less<>> others_;
  std::map<std::string, std::string, std::less<>> categories_;
};

}  // namespace dtsim
