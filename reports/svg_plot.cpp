#include "reports/svg_plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace dtsim {

namespace {

constexpr double width = 720;
constexpr double height = 380;
constexpr double left = 78;
constexpr double right_pad = 170;  // legend
constexpr double top = 36;
constexpr double bottom = 58;

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

std::string default_format(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string tick_label(const PlotAxis& axis, double v) { return axis.format ? axis.format(v) : default_format(v); }

// Maps data values to pixels along one axis.
struct Scale {
  double lo = 0;
  double hi = 1;
  bool log = false;
  double from_px = 0;
  double to_px = 1;

  double map(double v) const {
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    const double t = b > a ? ((log ? std::log10(v) : v) - a) / (b - a) : 0.5;
    return from_px + t * (to_px - from_px);
  }
};

// Ticks at 1, 2 or 5 times a power of ten (linear) or at powers of ten (log); widens lo and hi to whole ticks.
std::vector<double> make_ticks(Scale& s) {
  std::vector<double> ticks;
  if (s.log) {
    int first = static_cast<int>(std::floor(std::log10(s.lo) + 1e-9));
    int last = static_cast<int>(std::ceil(std::log10(s.hi) - 1e-9));
    if (last <= first) last = first + 1;
    const int step = (last - first) > 8 ? 2 : 1;
    s.lo = std::pow(10.0, first);
    s.hi = std::pow(10.0, last);
    for (int e = first; e <= last; e += step)
      ticks.push_back(std::pow(10.0, e));
    return ticks;
  }
  if (s.hi <= s.lo) s.hi = s.lo + 1;
  const double raw = (s.hi - s.lo) / 6;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    if (step >= raw) break;
  }
  s.lo = std::floor(s.lo / step + 1e-9) * step;
  s.hi = std::ceil(s.hi / step - 1e-9) * step;
  for (double v = s.lo; v <= s.hi + step * 1e-6; v += step)
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

void open_svg(std::ostringstream& out, const std::string& title, double h = height) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << num(width) << ' ' << num(h) << "\" width=\""
      << num(width) << "\" height=\"" << num(h) << "\" role=\"img\" aria-label=\"" << escape_xml(title) << "\">\n";
  out << "<text class=\"title\" x=\"" << num(left) << "\" y=\"22\">" << escape_xml(title) << "</text>\n";
}

void axes(std::ostringstream& out, Scale& xs, Scale& ys, const PlotAxis& x, const PlotAxis& y) {
  const double x0 = left;
  const double x1 = width - right_pad;
  const double y0 = height - bottom;
  const double y1 = top;
  out << "<g class=\"axes\">\n";
  for (double t : make_ticks(ys)) {
    const double py = ys.map(t);
    out << "<line class=\"grid\" x1=\"" << num(x0) << "\" x2=\"" << num(x1) << "\" y1=\"" << num(py) << "\" y2=\""
        << num(py) << "\"/><text class=\"tick\" x=\"" << num(x0 - 6) << "\" y=\"" << num(py + 4)
        << "\" text-anchor=\"end\">" << escape_xml(tick_label(y, t)) << "</text>\n";
  }
  for (double t : make_ticks(xs)) {
    const double px = xs.map(t);
    out << "<line class=\"grid\" x1=\"" << num(px) << "\" x2=\"" << num(px) << "\" y1=\"" << num(y0) << "\" y2=\""
        << num(y1) << "\"/><text class=\"tick\" x=\"" << num(px) << "\" y=\"" << num(y0 + 18)
        << "\" text-anchor=\"middle\">" << escape_xml(tick_label(x, t)) << "</text>\n";
  }
  out << "<line class=\"axis\" x1=\"" << num(x0) << "\" x2=\"" << num(x1) << "\" y1=\"" << num(y0) << "\" y2=\""
      << num(y0) << "\"/><line class=\"axis\" x1=\"" << num(x0) << "\" x2=\"" << num(x0) << "\" y1=\"" << num(y0)
      << "\" y2=\"" << num(y1) << "\"/>\n";
  out << "<text class=\"label\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(height - 14)
      << "\" text-anchor=\"middle\">" << escape_xml(x.label) << "</text>\n";
  out << "<text class=\"label\" transform=\"translate(18," << num((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape_xml(y.label) << "</text>\n";
  out << "</g>\n";
}

void legend_entry(std::ostringstream& out, std::size_t row, const std::string& name, std::string_view colour,
                  bool dashed, bool box) {
  const double lx = width - right_pad + 14;
  const double ly = top + 8 + 18 * static_cast<double>(row);
  if (box) {
    out << "<rect x=\"" << num(lx) << "\" y=\"" << num(ly - 9) << "\" width=\"18\" height=\"11\" fill=\"" << colour
        << "\"/>";
  } else {
    out << "<line x1=\"" << num(lx) << "\" x2=\"" << num(lx + 18) << "\" y1=\"" << num(ly - 4) << "\" y2=\""
        << num(ly - 4) << "\" stroke=\"" << colour << "\" stroke-width=\"2.5\""
        << (dashed ? " stroke-dasharray=\"5 4\"" : "") << "/>";
  }
  out << "<text class=\"legend\" x=\"" << num(lx + 24) << "\" y=\"" << num(ly) << "\">" << escape_xml(name)
      << "</text>\n";
}

}  // namespace

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view palette_colour(std::size_t i) {
  // Okabe and Ito's colour-blind-safe palette, then a few extra distinct colours
  static constexpr std::array<std::string_view, 10> colours{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                                            "#56B4E9", "#000000", "#F0E442", "#8C564B", "#7F7F7F"};
  return colours[i % colours.size()];
}

std::string render_line_plot(const LinePlot& plot) {
  Scale xs{std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), plot.x.log, left,
           width - right_pad};
  Scale ys{std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), plot.y.log, height - bottom, top};
  auto usable = [](const Scale& s, double v) { return std::isfinite(v) && (!s.log || v > 0); };
  for (const PlotSeries& series : plot.series) {
    for (const auto& [x, y] : series.points) {
      if (!usable(xs, x) || !usable(ys, y)) continue;
      xs.lo = std::min(xs.lo, x);
      xs.hi = std::max(xs.hi, x);
      ys.lo = std::min(ys.lo, y);
      ys.hi = std::max(ys.hi, y);
    }
  }
  if (xs.lo > xs.hi) xs.lo = xs.hi = 1;  // nothing to draw
  if (ys.lo > ys.hi) ys.lo = ys.hi = 1;
  if (!ys.log) ys.lo = std::min(ys.lo, 0.0);
  if (xs.lo == xs.hi) {
    xs.lo = xs.log ? xs.lo / 2 : xs.lo - 1;
    xs.hi = xs.log ? xs.hi * 2 : xs.hi + 1;
  }
  if (ys.lo == ys.hi) ys.hi = ys.log ? ys.hi * 10 : ys.hi + 1;
  std::ostringstream out;
  open_svg(out, plot.title);
  axes(out, xs, ys, plot.x, plot.y);
  for (const auto& [x, label] : plot.markers) {
    if (!usable(xs, x) || x < xs.lo || x > xs.hi) continue;
    const double px = xs.map(x);
    out << "<g class=\"marker\"><line x1=\"" << num(px) << "\" x2=\"" << num(px) << "\" y1=\"" << num(height - bottom)
        << "\" y2=\"" << num(top) << "\" stroke=\"#777\" stroke-dasharray=\"2 3\"/><text class=\"note\" x=\""
        << num(px + 3) << "\" y=\"" << num(top + 10) << "\">" << escape_xml(label) << "</text></g>\n";
  }
  for (std::size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& series = plot.series[i];
    const std::string_view colour = palette_colour(i);
    out << "<g class=\"series\" data-series=\"" << escape_xml(series.name) << "\">\n<polyline fill=\"none\" stroke=\""
        << colour << "\" stroke-width=\"2\"" << (series.dashed ? " stroke-dasharray=\"5 4\"" : "") << " points=\"";
    bool first = true;
    for (const auto& [x, y] : series.points) {
      if (!usable(xs, x) || !usable(ys, y)) continue;
      out << (first ? "" : " ") << num(xs.map(x)) << ',' << num(ys.map(y));
      first = false;
    }
    out << "\"/>\n";
    if (!series.dashed) {
      for (const auto& [x, y] : series.points) {
        if (!usable(xs, x) || !usable(ys, y)) continue;
        out << "<circle cx=\"" << num(xs.map(x)) << "\" cy=\"" << num(ys.map(y)) << "\" r=\"3\" fill=\"" << colour
            << "\"><title>" << escape_xml(series.name + ": " + tick_label(plot.x, x) + ", " + tick_label(plot.y, y))
            << "</title></circle>\n";
      }
    }
    out << "</g>\n";
    legend_entry(out, i, series.name, colour, series.dashed, false);
  }
  out << "</svg>\n";
  return out.str();
}

std::string render_stacked_bars(const StackedBars& bars) {
  PlotAxis y = bars.y;
  Scale ys{0, 0, false, height - bottom, top};
  for (const std::vector<double>& parts : bars.values) {
    double total = 0;
    for (double v : parts)
      total += std::max(0.0, v);
    ys.hi = std::max(ys.hi, total);
  }
  if (ys.hi <= 0) ys.hi = 1;
  std::ostringstream out;
  open_svg(out, bars.title);
  // a category axis: draw the y grid through a dummy x scale, then the bars
  Scale xs{0, 1, false, left, width - right_pad};
  PlotAxis x;
  x.label = bars.x_label;
  x.format = [](double) { return std::string(); };
  axes(out, xs, ys, x, y);
  const std::size_t n = bars.categories.size();
  const double slot = n > 0 ? (width - right_pad - left) / static_cast<double>(n) : 0;
  for (std::size_t p = 0; p < bars.parts.size(); ++p) {
    out << "<g class=\"series\" data-series=\"" << escape_xml(bars.parts[p]) << "\">\n";
    for (std::size_t c = 0; c < n; ++c) {
      double below = 0;
      for (std::size_t q = 0; q < p && q < bars.values[c].size(); ++q)
        below += std::max(0.0, bars.values[c][q]);
      const double v = p < bars.values[c].size() ? std::max(0.0, bars.values[c][p]) : 0.0;
      if (v <= 0) continue;
      const double y_top = ys.map(below + v);
      const double y_bottom = ys.map(below);
      out << "<rect x=\"" << num(left + slot * (static_cast<double>(c) + 0.15)) << "\" y=\"" << num(y_top)
          << "\" width=\"" << num(slot * 0.7) << "\" height=\"" << num(y_bottom - y_top) << "\" fill=\""
          << palette_colour(p) << "\"><title>"
          << escape_xml(bars.categories[c] + ", " + bars.parts[p] + ": " + tick_label(y, v)) << "</title></rect>\n";
    }
    out << "</g>\n";
    legend_entry(out, p, bars.parts[p], palette_colour(p), false, true);
  }
  for (std::size_t c = 0; c < n; ++c) {
    out << "<text class=\"tick\" x=\"" << num(left + slot * (static_cast<double>(c) + 0.5)) << "\" y=\""
        << num(height - bottom + 18) << "\" text-anchor=\"middle\">" << escape_xml(bars.categories[c]) << "</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

std::string render_category_grid(const CategoryGrid& grid) {
  const double cell_h = 26;
  const double h = top + bottom + cell_h * static_cast<double>(std::max<std::size_t>(grid.rows.size(), 1)) + 10;
  const double x0 = left + 30;
  const double cell_w = grid.columns.empty() ? 0 : (width - right_pad - x0) / static_cast<double>(grid.columns.size());
  std::ostringstream out;
  open_svg(out, grid.title, h);
  for (std::size_t r = 0; r < grid.rows.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    out << "<text class=\"tick\" x=\"" << num(x0 - 6) << "\" y=\"" << num(y + cell_h / 2 + 4)
        << "\" text-anchor=\"end\">" << escape_xml(grid.rows[r]) << "</text>\n";
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
      const int k = r < grid.cells.size() && c < grid.cells[r].size() ? grid.cells[r][c] : -1;
      const std::string note = r < grid.notes.size() && c < grid.notes[r].size() ? grid.notes[r][c] : std::string();
      out << "<rect class=\"cell\" data-winner=\""
          << (k >= 0 ? escape_xml(grid.legend[static_cast<std::size_t>(k)]) : "") << "\" x=\""
          << num(x0 + cell_w * static_cast<double>(c)) << "\" y=\"" << num(y) << "\" width=\"" << num(cell_w - 2)
          << "\" height=\"" << num(cell_h - 2) << "\" fill=\""
          << (k >= 0 ? palette_colour(static_cast<std::size_t>(k)) : "#eeeeee") << "\"><title>"
          << escape_xml(grid.rows[r] + ", " + grid.columns[c] + ": " +
                        (k >= 0 ? grid.legend[static_cast<std::size_t>(k)] : std::string("none")) +
                        (note.empty() ? "" : " (" + note + ")"))
          << "</title></rect>\n";
    }
  }
  const double y_end = top + cell_h * static_cast<double>(grid.rows.size());
  for (std::size_t c = 0; c < grid.columns.size(); ++c) {
    out << "<text class=\"tick\" x=\"" << num(x0 + cell_w * (static_cast<double>(c) + 0.5)) << "\" y=\""
        << num(y_end + 16) << "\" text-anchor=\"middle\">" << escape_xml(grid.columns[c]) << "</text>\n";
  }
  out << "<text class=\"label\" x=\"" << num((x0 + width - right_pad) / 2) << "\" y=\"" << num(y_end + 40)
      << "\" text-anchor=\"middle\">" << escape_xml(grid.x_label) << "</text>\n";
  out << "<text class=\"label\" transform=\"translate(18," << num(top + (y_end - top) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape_xml(grid.y_label) << "</text>\n";
  for (std::size_t k = 0; k < grid.legend.size(); ++k)
    legend_entry(out, k, grid.legend[k], palette_colour(k), false, true);
  out << "</svg>\n";
  return out.str();
}

}  // namespace dtsim
