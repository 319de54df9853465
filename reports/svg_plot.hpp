// Inline SVG charts for the HTML report: line plots (linear or log axes, optional vertical markers), stacked bars and
// a categorical grid (the winner map). Pure functions from typed data to SVG text; no scripts, no external resources.
// Every series is a <g class="series" data-series="NAME"> so that tests (and readers of the file) can find it, and
// every point carries a <title> tooltip with its values. Each tick is a grid line of class "grid x" or "grid y"
// followed by its label, of class "tick x" or "tick y". A chart is `width` wide at least, wider where its title or
// legend need it (the legend's width is estimated from its longest name, so that no name is cut off).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtsim {

std::string escape_xml(std::string_view text);

struct PlotAxis {
  std::string label;  // with its unit, e.g. "message size (bytes)"
  bool log = false;
  std::function<std::string(double)> format;  // tick labels; empty: %g
  // where to put ticks (those whose labels would collide are left out) and the least range the axis shows; empty:
  // steps of 1, 2 or 5 times a power of ten (linear) or powers of ten (log)
  std::vector<double> ticks;
};

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  bool dashed = false;                            // a reference, e.g. the ideal line: dashed, without points
  std::string colour;                             // empty: palette_colour(the series' index)
};

struct LinePlot {
  std::string title;
  PlotAxis x;
  PlotAxis y;
  std::vector<PlotSeries> series;
  std::vector<std::pair<double, std::string>> markers;  // vertical lines at x with a label (e.g. crossovers)
  double width = 720;
  bool join_points = true;  // false: a scatter plot, the points of series not dashed are not joined by a line
};

struct StackedBars {
  std::string title;
  std::string x_label;
  PlotAxis y;
  std::vector<std::string> categories;      // one bar each
  std::vector<std::string> parts;           // stacked from the bottom
  std::vector<std::vector<double>> values;  // [category][part]
  std::vector<std::string> part_colours;    // [part]; empty: palette_colour(part)
  double width = 720;
};

struct CategoryGrid {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> columns;
  std::vector<std::string> rows;                // drawn top to bottom
  std::vector<std::string> legend;              // the categories cells take
  std::vector<std::vector<int>> cells;          // [row][column]: index into legend, -1: empty
  std::vector<std::vector<std::string>> notes;  // [row][column]: tooltip text (optional)
  std::vector<std::string> legend_colours;      // [legend entry]; empty: palette_colour(entry)
  double width = 720;
};

std::string render_line_plot(const LinePlot& plot);
std::string render_stacked_bars(const StackedBars& bars);
std::string render_category_grid(const CategoryGrid& grid);

// The colour of series or category i where the caller gives none (Okabe and Ito's colour-blind-safe palette; the
// report gives its own, reports/palette.hpp).
std::string_view palette_colour(std::size_t i);

// The width in pixels that `text` is taken to need at `font_px`: generous (0.68 em a character), so that a legend
// laid out by it is not cut off in the fonts browsers pick for sans-serif.
double estimated_text_px(std::string_view text, double font_px);

}  // namespace dtsim
