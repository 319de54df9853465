// Inline SVG charts for the HTML report: line plots (linear or log axes, optional vertical markers), stacked bars and
// a categorical grid (the winner map). Pure functions from typed data to SVG text; no scripts, no external resources.
// Every series is a <g class="series" data-series="NAME"> so that tests (and readers of the file) can find it, and
// every point carries a <title> tooltip with its values.
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
};

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  bool dashed = false;                            // e.g. the ideal line
};

struct LinePlot {
  std::string title;
  PlotAxis x;
  PlotAxis y;
  std::vector<PlotSeries> series;
  std::vector<std::pair<double, std::string>> markers;  // vertical lines at x with a label (e.g. crossovers)
};

struct StackedBars {
  std::string title;
  std::string x_label;
  PlotAxis y;
  std::vector<std::string> categories;      // one bar each
  std::vector<std::string> parts;           // stacked from the bottom
  std::vector<std::vector<double>> values;  // [category][part]
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
};

std::string render_line_plot(const LinePlot& plot);
std::string render_stacked_bars(const StackedBars& bars);
std::string render_category_grid(const CategoryGrid& grid);

// The colour of series or category i (a fixed palette that stays readable for colour-blind readers).
std::string_view palette_colour(std::size_t i);

}  // namespace dtsim
