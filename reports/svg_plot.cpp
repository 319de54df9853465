#include "reports/svg_plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace dtsim {

namespace {

constexpr double base_height = 380;
constexpr double margin_left = 78;
constexpr double margin_top = 36;
constexpr double margin_bottom = 58;
constexpr double least_plot_width = 360;
constexpr double legend_row = 18;
constexpr double legend_font_px = 11;  // the style sheet's sizes (reports/html_report.cpp)
constexpr double tick_font_px = 11;
constexpr double title_font_px = 14;

// Where a chart's parts go: the plot area spans [left, right] x [top, bottom]; the legend starts 14 right of it.
struct Frame {
  double width = 0;
  double height = 0;
  double left = margin_left;
  double right = 0;
  double top = margin_top;
  double bottom = 0;
};

// At least `width` x `height`, wider where the title or the legend's longest name need it, taller where the legend
// has more rows than fit beside the plot.
Frame make_frame(double width, double height, const std::string& title, const std::vector<std::string>& legend) {
  double legend_px = 0;
  for (const std::string& name : legend)
    legend_px = std::max(legend_px, estimated_text_px(name, legend_font_px));
  const double right_pad = 14 + 24 + legend_px + 12;  // gap, swatch and gap, the longest name, a margin
  Frame f;
  f.width = std::max(
      {width, margin_left + least_plot_width + right_pad, margin_left + estimated_text_px(title, title_font_px) + 12});
  f.right = f.width - right_pad;
  f.height = std::max(height, margin_top + 8 + legend_row * static_cast<double>(legend.size()) + 6);
  f.bottom = f.height - margin_bottom;
  return f;
}

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

// The axis' own ticks (the range widened to hold them), or ticks at 1, 2 or 5 times a power of ten (linear) or at
// powers of ten (log), lo and hi widened to whole ticks.
std::vector<double> make_ticks(Scale& s, const std::vector<double>& given) {
  std::vector<double> ticks;
  if (!given.empty()) {
    for (double t : given) {
      if (!std::isfinite(t) || (s.log && t <= 0)) continue;
      ticks.push_back(t);
      s.lo = std::min(s.lo, t);
      s.hi = std::max(s.hi, t);
    }
    std::sort(ticks.begin(), ticks.end());
    if (!ticks.empty() && s.hi > s.lo) return ticks;
    ticks.clear();
  }
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

void open_svg(std::ostringstream& out, const Frame& f, const std::string& title) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << num(f.width) << ' ' << num(f.height)
      << "\" width=\"" << num(f.width) << "\" height=\"" << num(f.height) << "\" role=\"img\" aria-label=\""
      << escape_xml(title) << "\">\n";
  out << "<text class=\"title\" x=\"" << num(f.left) << "\" y=\"22\">" << escape_xml(title) << "</text>\n";
}

void axes(std::ostringstream& out, const Frame& f, Scale& xs, Scale& ys, const PlotAxis& x, const PlotAxis& y) {
  const double x0 = f.left;
  const double x1 = f.right;
  const double y0 = f.bottom;
  const double y1 = f.top;
  out << "<g class=\"axes\">\n";
  double last_px = std::numeric_limits<double>::infinity();
  for (double t : make_ticks(ys, y.ticks)) {  // bottom up; labels closer than a line of text are left out
    const double py = ys.map(t);
    if (std::fabs(last_px - py) < tick_font_px + 3) continue;
    last_px = py;
    out << "<line class=\"grid y\" x1=\"" << num(x0) << "\" x2=\"" << num(x1) << "\" y1=\"" << num(py) << "\" y2=\""
        << num(py) << "\"/><text class=\"tick y\" x=\"" << num(x0 - 6) << "\" y=\"" << num(py + 4)
        << "\" text-anchor=\"end\">" << escape_xml(tick_label(y, t)) << "</text>\n";
  }
  last_px = -std::numeric_limits<double>::infinity();
  double last_half = 0;
  for (double t : make_ticks(xs, x.ticks)) {  // left to right; labels that would touch the one before are left out
    const double px = xs.map(t);
    const std::string label = tick_label(x, t);
    const double half = estimated_text_px(label, tick_font_px) / 2;
    if (px - half - 4 < last_px + last_half) continue;
    last_px = px;
    last_half = half;
    out << "<line class=\"grid x\" x1=\"" << num(px) << "\" x2=\"" << num(px) << "\" y1=\"" << num(y0) << "\" y2=\""
        << num(y1) << "\"/><text class=\"tick x\" x=\"" << num(px) << "\" y=\"" << num(y0 + 18)
        << "\" text-anchor=\"middle\">" << escape_xml(label) << "</text>\n";
  }
  out << "<line class=\"axis\" x1=\"" << num(x0) << "\" x2=\"" << num(x1) << "\" y1=\"" << num(y0) << "\" y2=\""
      << num(y0) << "\"/><line class=\"axis\" x1=\"" << num(x0) << "\" x2=\"" << num(x0) << "\" y1=\"" << num(y0)
      << "\" y2=\"" << num(y1) << "\"/>\n";
  out << "<text class=\"label\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(f.height - 14)
      << "\" text-anchor=\"middle\">" << escape_xml(x.label) << "</text>\n";
  out << "<text class=\"label\" transform=\"translate(18," << num((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape_xml(y.label) << "</text>\n";
  out << "</g>\n";
}

void legend_entry(std::ostringstream& out, const Frame& f, std::size_t row, const std::string& name,
                  std::string_view colour, bool dashed, bool box) {
  const double lx = f.right + 14;
  const double ly = f.top + 8 + legend_row * static_cast<double>(row);
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

std::string_view colour_or(const std::vector<std::string>& colours, std::size_t i) {
  return i < colours.size() && !colours[i].empty() ? std::string_view(colours[i]) : palette_colour(i);
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
  // Okabe and Ito's colour-blind-safe palette (its yellow last: it is faint on white), then two of Tol's muted colours
  static constexpr std::array<std::string_view, 10> colours{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                                            "#000000", "#56B4E9", "#882255", "#999933", "#F0E442"};
  return colours[i % colours.size()];
}

double estimated_text_px(std::string_view text, double font_px) {
  std::size_t characters = 0;
  for (const char c : text)
    characters += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;  // UTF-8: count lead bytes only
  return 0.68 * font_px * static_cast<double>(characters);
}

std::string render_line_plot(const LinePlot& plot) {
  std::vector<std::string> names;
  for (const PlotSeries& series : plot.series)
    names.push_back(series.name);
  const Frame f = make_frame(plot.width, base_height, plot.title, names);
  Scale xs{std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), plot.x.log, f.left, f.right};
  Scale ys{std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), plot.y.log, f.bottom, f.top};
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
  open_svg(out, f, plot.title);
  axes(out, f, xs, ys, plot.x, plot.y);
  for (const auto& [x, label] : plot.markers) {
    if (!usable(xs, x) || x < xs.lo || x > xs.hi) continue;
    const double px = xs.map(x);
    out << "<g class=\"marker\"><line x1=\"" << num(px) << "\" x2=\"" << num(px) << "\" y1=\"" << num(f.bottom)
        << "\" y2=\"" << num(f.top) << "\" stroke=\"#777\" stroke-dasharray=\"2 3\"/><text class=\"note\" x=\""
        << num(px + 3) << "\" y=\"" << num(f.top + 10) << "\">" << escape_xml(label) << "</text></g>\n";
  }
  for (std::size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& series = plot.series[i];
    const std::string_view colour = series.colour.empty() ? palette_colour(i) : std::string_view(series.colour);
    out << "<g class=\"series\" data-series=\"" << escape_xml(series.name) << "\">\n";
    if (plot.join_points || series.dashed) {
      out << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\""
          << (series.dashed ? " stroke-dasharray=\"5 4\"" : "") << " points=\"";
      bool first = true;
      for (const auto& [x, y] : series.points) {
        if (!usable(xs, x) || !usable(ys, y)) continue;
        out << (first ? "" : " ") << num(xs.map(x)) << ',' << num(ys.map(y));
        first = false;
      }
      out << "\"/>\n";
    }
    if (!series.dashed) {
      for (const auto& [x, y] : series.points) {
        if (!usable(xs, x) || !usable(ys, y)) continue;
        out << "<circle cx=\"" << num(xs.map(x)) << "\" cy=\"" << num(ys.map(y)) << "\" r=\"3\" fill=\"" << colour
            << "\"><title>" << escape_xml(series.name + ": " + tick_label(plot.x, x) + ", " + tick_label(plot.y, y))
            << "</title></circle>\n";
      }
    }
    out << "</g>\n";
    legend_entry(out, f, i, series.name, colour, series.dashed, !plot.join_points && !series.dashed);
  }
  out << "</svg>\n";
  return out.str();
}

std::string render_stacked_bars(const StackedBars& bars) {
  const Frame f = make_frame(bars.width, base_height, bars.title, bars.parts);
  PlotAxis y = bars.y;
  Scale ys{0, 0, false, f.bottom, f.top};
  for (const std::vector<double>& parts : bars.values) {
    double total = 0;
    for (double v : parts)
      total += std::max(0.0, v);
    ys.hi = std::max(ys.hi, total);
  }
  if (ys.hi <= 0) ys.hi = 1;
  std::ostringstream out;
  open_svg(out, f, bars.title);
  // a category axis: draw the y grid through a dummy x scale, then the bars
  Scale xs{0, 1, false, f.left, f.right};
  PlotAxis x;
  x.label = bars.x_label;
  x.format = [](double) { return std::string(); };
  axes(out, f, xs, ys, x, y);
  const std::size_t n = bars.categories.size();
  const double slot = n > 0 ? (f.right - f.left) / static_cast<double>(n) : 0;
  for (std::size_t p = 0; p < bars.parts.size(); ++p) {
    const std::string_view colour = colour_or(bars.part_colours, p);
    out << "<g class=\"series\" data-series=\"" << escape_xml(bars.parts[p]) << "\">\n";
    for (std::size_t c = 0; c < n; ++c) {
      double below = 0;
      for (std::size_t q = 0; q < p && q < bars.values[c].size(); ++q)
        below += std::max(0.0, bars.values[c][q]);
      const double v = p < bars.values[c].size() ? std::max(0.0, bars.values[c][p]) : 0.0;
      if (v <= 0) continue;
      const double y_top = ys.map(below + v);
      const double y_bottom = ys.map(below);
      out << "<rect x=\"" << num(f.left + slot * (static_cast<double>(c) + 0.15)) << "\" y=\"" << num(y_top)
          << "\" width=\"" << num(slot * 0.7) << "\" height=\"" << num(y_bottom - y_top) << "\" fill=\"" << colour
          << "\"><title>" << escape_xml(bars.categories[c] + ", " + bars.parts[p] + ": " + tick_label(y, v))
          << "</title></rect>\n";
    }
    out << "</g>\n";
    legend_entry(out, f, p, bars.parts[p], colour, false, true);
  }
  for (std::size_t c = 0; c < n; ++c) {
    out << "<text class=\"tick\" x=\"" << num(f.left + slot * (static_cast<double>(c) + 0.5)) << "\" y=\""
        << num(f.bottom + 18) << "\" text-anchor=\"middle\">" << escape_xml(bars.categories[c]) << "</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

std::string render_category_grid(const CategoryGrid& grid) {
  const double cell_h = 26;
  const double rows_h = cell_h * static_cast<double>(std::max<std::size_t>(grid.rows.size(), 1));
  const Frame f = make_frame(grid.width, margin_top + margin_bottom + rows_h + 10, grid.title, grid.legend);
  const double x0 = f.left + 30;
  const double cell_w = grid.columns.empty() ? 0 : (f.right - x0) / static_cast<double>(grid.columns.size());
  std::ostringstream out;
  open_svg(out, f, grid.title);
  for (std::size_t r = 0; r < grid.rows.size(); ++r) {
    const double y = f.top + cell_h * static_cast<double>(r);
    out << "<text class=\"tick\" x=\"" << num(x0 - 6) << "\" y=\"" << num(y + cell_h / 2 + 4)
        << "\" text-anchor=\"end\">" << escape_xml(grid.rows[r]) << "</text>\n";
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
      const int k = r < grid.cells.size() && c < grid.cells[r].size() ? grid.cells[r][c] : -1;
      const std::string note = r < grid.notes.size() && c < grid.notes[r].size() ? grid.notes[r][c] : std::string();
      out << "<rect class=\"cell\" data-winner=\""
          << (k >= 0 ? escape_xml(grid.legend[static_cast<std::size_t>(k)]) : "") << "\" x=\""
          << num(x0 + cell_w * static_cast<double>(c)) << "\" y=\"" << num(y) << "\" width=\"" << num(cell_w - 2)
          << "\" height=\"" << num(cell_h - 2) << "\" fill=\""
          << (k >= 0 ? colour_or(grid.legend_colours, static_cast<std::size_t>(k)) : "#eeeeee") << "\"><title>"
          << escape_xml(grid.rows[r] + ", " + grid.columns[c] + ": " +
                        (k >= 0 ? grid.legend[static_cast<std::size_t>(k)] : std::string("none")) +
                        (note.empty() ? "" : " (" + note + ")"))
          << "</title></rect>\n";
    }
  }
  const double y_end = f.top + cell_h * static_cast<double>(grid.rows.size());
  for (std::size_t c = 0; c < grid.columns.size(); ++c) {
    out << "<text class=\"tick\" x=\"" << num(x0 + cell_w * (static_cast<double>(c) + 0.5)) << "\" y=\""
        << num(y_end + 16) << "\" text-anchor=\"middle\">" << escape_xml(grid.columns[c]) << "</text>\n";
  }
  out << "<text class=\"label\" x=\"" << num((x0 + f.right) / 2) << "\" y=\"" << num(y_end + 40)
      << "\" text-anchor=\"middle\">" << escape_xml(grid.x_label) << "</text>\n";
  out << "<text class=\"label\" transform=\"translate(18," << num(f.top + (y_end - f.top) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape_xml(grid.y_label) << "</text>\n";
  for (std::size_t k = 0; k < grid.legend.size(); ++k)
    legend_entry(out, f, k, grid.legend[k], colour_or(grid.legend_colours, k), false, true);
  out << "</svg>\n";
  return out.str();
}

}  // namespace dtsim
