#include "reports/step_drawing.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "reports/format.hpp"
#include "reports/svg_plot.hpp"

namespace dtsim {
namespace {

std::string fixed(double x) { return format_fixed(x, 2); }

std::string exact(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", x);
  return text;
}

const char* colour(SpanKind kind) {
  switch (kind) {
    case SpanKind::input_stall: return "#bdbdbd";
    case SpanKind::forward: return "#4575b4";
    case SpanKind::backward: return "#f46d43";
    case SpanKind::optimizer: return "#8073ac";
    case SpanKind::allreduce: return "#1a9850";
    default: return "#999999";
  }
}

}  // namespace

std::string step_svg(const RunTrace& trace, const StepDrawing& d) {
  constexpr double left = 170, right = 20, top = 64, row = 26, gap = 18, width = 1200;
  double end_s = 0;
  for (const SpanRecord& s : trace.spans)
    end_s = std::max(end_s, s.end_s);
  if (end_s <= 0) end_s = 1;
  const double plot = width - left - right;
  const auto x = [&](double t) { return left + plot * t / end_s; };
  const double height = top + static_cast<double>(d.ranks.size()) * (2 * row + gap) + 60;
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << fixed(height)
      << "\" viewBox=\"0 0 " << width << ' ' << fixed(height) << "\" data-exposed-s=\"" << exact(d.exposed_s)
      << "\"><style>text{font-family:sans-serif;font-size:11px;fill:#222}.title{font-size:14px;font-weight:bold}"
         ".tick{stroke:#fff;stroke-width:0.6;opacity:0.8}.exposed{fill:#d73027;fill-opacity:0.25;stroke:#d73027;"
         "stroke-dasharray:3 2}</style>";
  out << "<text class=\"title\" x=\"8\" y=\"20\">" << escape_xml(d.title) << "</text>";
  // the legend
  double lx = 8;
  for (const auto& [kind, name] :
       std::vector<std::pair<SpanKind, const char*>>{{SpanKind::input_stall, "input stall"},
                                                     {SpanKind::forward, "forward"},
                                                     {SpanKind::backward, "backward (white ticks: layers)"},
                                                     {SpanKind::allreduce, "bucket allreduce"},
                                                     {SpanKind::optimizer, "optimizer"}}) {
    out << "<rect x=\"" << fixed(lx) << "\" y=\"32\" width=\"12\" height=\"12\" fill=\"" << colour(kind)
        << "\"/><text x=\"" << fixed(lx + 16) << "\" y=\"42\">" << name << "</text>";
    lx += 40 + 6.2 * static_cast<double>(std::string(name).size());
  }
  out << "<rect class=\"exposed\" x=\"" << fixed(lx) << "\" y=\"32\" width=\"12\" height=\"12\"/><text x=\""
      << fixed(lx + 16) << "\" y=\"42\">exposed communication (the step waits)</text>";
  const double total_backward = std::accumulate(d.backward_layer_s.begin(), d.backward_layer_s.end(), 0.0);
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    const int rank = d.ranks[i];
    const double y = top + static_cast<double>(i) * (2 * row + gap);
    out << "<text x=\"8\" y=\"" << fixed(y + 16) << "\">" << escape_xml(d.rank_notes[i]) << "</text>"
        << "<text x=\"8\" y=\"" << fixed(y + row + 16) << "\">  its gradient reductions</text>";
    double backward_end = 0, reduce_end = 0;
    for (const SpanRecord& s : trace.spans) {
      if (s.rank != rank) continue;
      const bool reduce = s.kind == SpanKind::allreduce;
      const double ry = reduce ? y + row : y;
      out << "<rect class=\"span\" data-rank=\"" << rank << "\" data-kind=\"" << to_string(s.kind) << "\" data-start=\""
          << exact(s.start_s) << "\" data-end=\"" << exact(s.end_s) << "\" data-bytes=\"" << s.bytes << "\" x=\""
          << fixed(x(s.start_s)) << "\" y=\"" << fixed(ry + 2) << "\" width=\""
          << fixed(std::max(0.5, x(s.end_s) - x(s.start_s))) << "\" height=\"" << row - 4 << "\" fill=\""
          << colour(s.kind) << "\"><title>" << to_string(s.kind) << " " << format_seconds(s.start_s) << " to "
          << format_seconds(s.end_s) << (s.bytes > 0 ? ", " + format_bytes(s.bytes) : "") << "</title></rect>";
      if (s.kind == SpanKind::backward && total_backward > 0) {  // the layers, scaled to the span
        double t = s.start_s;
        for (const double layer : d.backward_layer_s) {
          t += (s.end_s - s.start_s) * layer / total_backward;
          if (t >= s.end_s) break;
          out << "<line class=\"tick\" x1=\"" << fixed(x(t)) << "\" y1=\"" << fixed(y + 3) << "\" x2=\"" << fixed(x(t))
              << "\" y2=\"" << fixed(y + row - 3) << "\"/>";
        }
        backward_end = std::max(backward_end, s.end_s);
      }
      if (reduce) reduce_end = std::max(reduce_end, s.end_s);
    }
    if (reduce_end > backward_end && d.exposed_s > 0) {  // the last step's wait for its last reductions
      out << "<rect class=\"exposed\" data-rank=\"" << rank << "\" data-start=\"" << exact(backward_end)
          << "\" data-end=\"" << exact(reduce_end) << "\" x=\"" << fixed(x(backward_end)) << "\" y=\"" << fixed(y + 1)
          << "\" width=\"" << fixed(x(reduce_end) - x(backward_end)) << "\" height=\"" << 2 * row - 2 << "\"/>";
    }
  }
  const double axis_y = top + static_cast<double>(d.ranks.size()) * (2 * row + gap) + 10;
  out << "<line x1=\"" << left << "\" y1=\"" << fixed(axis_y) << "\" x2=\"" << width - right << "\" y2=\""
      << fixed(axis_y) << "\" stroke=\"#333\"/>";
  for (int k = 0; k <= 5; ++k) {
    const double t = end_s * k / 5;
    out << "<text x=\"" << fixed(std::min(x(t), width - right - 50)) << "\" y=\"" << fixed(axis_y + 16) << "\">"
        << format_seconds(t) << "</text>";
  }
  out << "<text x=\"" << left << "\" y=\"" << fixed(axis_y + 34) << "\">simulated time (every simulated step; the "
      << "last is the one reported)</text></svg>\n";
  return out.str();
}

}  // namespace dtsim
