#include "reports/schedule_drawing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <queue>
#include <sstream>

#include "reports/format.hpp"
#include "reports/svg_plot.hpp"

namespace dtsim {
namespace {

struct Point {
  double x = 0;
  double y = 0;
};

constexpr double panel_width = 420;
constexpr double panel_height = 440;  // the title above the drawing
constexpr double title_height = 40;
constexpr double node_radius = 13;

std::string number(double x, const char* format = "%.1f") {
  char text[32];
  std::snprintf(text, sizeof text, format, x);
  return text;
}

std::string value_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e9) return number(v, "%.0f");
  return number(v, "%.3g");
}

bool is_helper(const ScheduleRounds& r, int rank) { return rank >= r.participants; }

// Positions in a drawing area of panel_width x (panel_height - title_height), ranks' centres.
std::vector<Point> place(const ScheduleRounds& rounds, const DrawingRequest& request) {
  const int p = rounds.ranks;
  const double w = panel_width, h = panel_height - title_height;
  const Point centre{w / 2, h / 2};
  const double radius = std::min(w, h) / 2 - 48;
  std::vector<Point> at(static_cast<std::size_t>(p));
  const auto on_circle = [&](const std::vector<int>& ranks, double r) {
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const double a = -std::numbers::pi / 2 + 2 * std::numbers::pi * static_cast<double>(i) / ranks.size();
      at[static_cast<std::size_t>(ranks[i])] = {centre.x + r * std::cos(a), centre.y + r * std::sin(a)};
    }
  };
  std::vector<int> all(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i)
    all[static_cast<std::size_t>(i)] = i;
  switch (request.layout) {
    case DrawLayout::circle: on_circle(all, p == 1 ? 0 : radius); break;
    case DrawLayout::hub: {
      std::vector<int> workers, servers;
      for (int i = 0; i < p; ++i)
        (is_helper(rounds, i) ? servers : workers).push_back(i);
      on_circle(workers, radius);
      for (std::size_t s = 0; s < servers.size(); ++s) {
        const double span = std::min(radius, 30.0 * static_cast<double>(servers.size()));
        at[static_cast<std::size_t>(servers[s])] = {
            centre.x - span / 2 + span * (static_cast<double>(s) + 0.5) / static_cast<double>(servers.size()),
            centre.y};
      }
      break;
    }
    case DrawLayout::hypercube: {  // even bits give x, odd bits give y
      int bits = 0;
      while ((1 << bits) < p)
        ++bits;
      const int xs = 1 << ((bits + 1) / 2), ys = 1 << (bits / 2);
      for (int r = 0; r < p; ++r) {
        int x = 0, y = 0;
        for (int b = 0; b < bits; ++b) {
          if (((r >> b) & 1) == 0) continue;
          if (b % 2 == 0) {
            x |= 1 << (b / 2);
          } else {
            y |= 1 << (b / 2);
          }
        }
        at[static_cast<std::size_t>(r)] = {40 + (w - 80) * (x + 0.5) / xs, 30 + (h - 60) * (y + 0.5) / ys};
      }
      break;
    }
    case DrawLayout::tree: {  // rows by breadth-first distance from the root over the transfers
      std::vector<std::vector<int>> adjacent(static_cast<std::size_t>(p));
      for (const RoundTransfer& t : rounds.transfers) {
        adjacent[static_cast<std::size_t>(t.src)].push_back(t.dst);
        adjacent[static_cast<std::size_t>(t.dst)].push_back(t.src);
      }
      std::vector<int> depth(static_cast<std::size_t>(p), -1);
      const int root = std::clamp(request.root, 0, p - 1);
      std::queue<int> q;
      depth[static_cast<std::size_t>(root)] = 0;
      q.push(root);
      while (!q.empty()) {
        const int r = q.front();
        q.pop();
        std::vector<int>& next = adjacent[static_cast<std::size_t>(r)];
        std::sort(next.begin(), next.end());
        for (const int n : next) {
          if (depth[static_cast<std::size_t>(n)] >= 0) continue;
          depth[static_cast<std::size_t>(n)] = depth[static_cast<std::size_t>(r)] + 1;
          q.push(n);
        }
      }
      const int deepest = *std::max_element(depth.begin(), depth.end());
      for (int& d : depth) {
        if (d < 0) d = deepest + 1;  // (ranks no transfer reaches: a row of their own)
      }
      const int rows = *std::max_element(depth.begin(), depth.end()) + 1;
      for (int d = 0; d < rows; ++d) {
        std::vector<int> row;
        for (int r = 0; r < p; ++r) {
          if (depth[static_cast<std::size_t>(r)] == d) row.push_back(r);
        }
        for (std::size_t i = 0; i < row.size(); ++i) {
          at[static_cast<std::size_t>(row[i])] = {w * (static_cast<double>(i) + 0.5) / static_cast<double>(row.size()),
                                                  36 + (h - 72) * (rows == 1 ? 0.5 : d / (rows - 1.0))};
        }
      }
      break;
    }
    case DrawLayout::nodes: {
      const int per = request.ranks_per_node > 0
                          ? request.ranks_per_node
                          : std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(p)))));
      const int nodes = (p + per - 1) / per;
      const int columns = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(nodes))));
      const int rows = (nodes + columns - 1) / columns;
      for (int r = 0; r < p; ++r) {
        const int node = r / per, slot = r % per;
        const double box_w = w / columns, box_h = h / rows;
        const double x0 = (node % columns) * box_w, y0 = static_cast<double>(node / columns) * box_h;
        const int across = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(per))));
        const int down = (per + across - 1) / across;
        at[static_cast<std::size_t>(r)] = {x0 + box_w * (slot % across + 0.5) / across,
                                           y0 + box_h * (static_cast<double>(slot / across) + 0.5) / down};
      }
      break;
    }
  }
  return at;
}

// A sequential colour for a share of the final contributions (0: empty, 1: complete).
std::string fill_colour(double share) {
  if (share <= 0) return "#ffffff";
  // from light yellow (a little) to dark blue (all)
  const double t = std::clamp(share, 0.0, 1.0);
  const int r = static_cast<int>(std::lround(255 + (8 - 255) * t));
  const int g = static_cast<int>(std::lround(237 + (81 - 237) * t));
  const int b = static_cast<int>(std::lround(160 + (156 - 160) * t));
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", r, g, b);
  return text;
}

std::string span_text(const Schedule& s, std::uint32_t span) {
  const Span& sp = s.spans[span];
  if (sp.chunk_count == 1) return "c" + std::to_string(sp.first_chunk);
  return "c" + std::to_string(sp.first_chunk) + "-" + std::to_string(sp.first_chunk + sp.chunk_count - 1);
}

// The sum of the values rank r's chunk c holds at `state`.
double held_value(const ScheduleRounds& rounds, const std::vector<double>& values, int state, int rank,
                  std::size_t chunk) {
  double sum = 0;
  for (int q = 0; q < rounds.ranks && q < static_cast<int>(values.size()); ++q)
    sum += rounds.count(state, rank, chunk, q) * values[static_cast<std::size_t>(q)];
  return sum;
}

// One panel: the transfers of `round` (-1: none, the start) over the buffers as they are after it.
std::string panel(const Schedule& s, const ScheduleRounds& rounds, const DrawingRequest& request,
                  const std::vector<Point>& at, int round) {
  std::ostringstream out;
  const int state = round + 1;  // contributions after this round
  std::uint64_t bytes = 0;
  int count = 0;
  for (const RoundTransfer& t : rounds.transfers) {
    if (t.round != round) continue;
    bytes += t.bytes;
    ++count;
  }
  std::string title = round < 0 ? "start: each rank's own data"
                                : "round " + std::to_string(round + 1) + " of " + std::to_string(rounds.rounds) + ": " +
                                      std::to_string(count) + " transfer" + (count == 1 ? "" : "s") + ", " +
                                      format_bytes(bytes);
  std::string when;
  if (round >= 0 && static_cast<std::size_t>(round) < request.times.size()) {
    const RoundTime& t = request.times[static_cast<std::size_t>(round)];
    when = "from " + format_seconds(t.start_s) + " to " + format_seconds(t.end_s);
  }
  out << "<text x=\"8\" y=\"18\" class=\"title\">" << escape_xml(title) << "</text>";
  if (!when.empty()) out << "<text x=\"8\" y=\"34\" class=\"when\">" << escape_xml(when) << "</text>";
  out << "<g transform=\"translate(0," << title_height << ")\">";
  // nodes' boxes first
  if (request.layout == DrawLayout::nodes) {
    const int per = request.ranks_per_node > 0
                        ? request.ranks_per_node
                        : std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(rounds.ranks)))));
    for (int first = 0; first < rounds.ranks; first += per) {
      double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
      for (int r = first; r < std::min(rounds.ranks, first + per); ++r) {
        x0 = std::min(x0, at[static_cast<std::size_t>(r)].x);
        y0 = std::min(y0, at[static_cast<std::size_t>(r)].y);
        x1 = std::max(x1, at[static_cast<std::size_t>(r)].x);
        y1 = std::max(y1, at[static_cast<std::size_t>(r)].y);
      }
      out << "<rect class=\"node\" x=\"" << number(x0 - 26) << "\" y=\"" << number(y0 - 22) << "\" width=\""
          << number(x1 - x0 + 52) << "\" height=\"" << number(y1 - y0 + 50) << "\"/>";
    }
  }
  // arrows
  for (const RoundTransfer& t : rounds.transfers) {
    if (t.round != round) continue;
    const Point a = at[static_cast<std::size_t>(t.src)], b = at[static_cast<std::size_t>(t.dst)];
    const double dx = b.x - a.x, dy = b.y - a.y, length = std::max(1e-9, std::hypot(dx, dy));
    const double ux = dx / length, uy = dy / length;
    const double off = 4;  // a pair's two directions side by side
    const Point from{a.x + ux * node_radius - uy * off, a.y + uy * node_radius + ux * off};
    const Point to{b.x - ux * (node_radius + 3) - uy * off, b.y - uy * (node_radius + 3) + ux * off};
    std::string label = span_text(s, t.span) + " " + format_bytes(t.bytes);
    if (!request.values.empty() && s.spans[t.span].chunk_count == 1) {
      label = span_text(s, t.span) + " = " +
              value_text(held_value(rounds, request.values, round, t.src, s.spans[t.span].first_chunk));
    }
    out << "<g class=\"transfer\" data-round=\"" << t.round << "\" data-src=\"" << t.src << "\" data-dst=\"" << t.dst
        << "\" data-span=\"" << t.span << "\" data-bytes=\"" << t.bytes << "\" data-kind=\""
        << (t.reduce ? "reduce" : "copy") << "\"><line x1=\"" << number(from.x) << "\" y1=\"" << number(from.y)
        << "\" x2=\"" << number(to.x) << "\" y2=\"" << number(to.y) << "\" class=\"" << (t.reduce ? "reduce" : "copy")
        << "\" marker-end=\"url(#arrow)\"/>";
    if (count <= 16) {
      out << "<text class=\"label\" x=\"" << number((from.x + to.x) / 2 - uy * 7) << "\" y=\""
          << number((from.y + to.y) / 2 + ux * 7) << "\">" << escape_xml(label) << "</text>";
    }
    out << "</g>";
  }
  // ranks and their buffers
  const std::size_t chunks = rounds.chunks;
  const double bar = std::min(10.0, 56.0 / static_cast<double>(std::max<std::size_t>(1, chunks)));
  const bool show_values = !request.values.empty() && chunks <= 4;
  for (int r = 0; r < rounds.ranks; ++r) {
    const Point c = at[static_cast<std::size_t>(r)];
    out << "<g class=\"rank\" data-rank=\"" << r << "\"><circle cx=\"" << number(c.x) << "\" cy=\"" << number(c.y)
        << "\" r=\"" << node_radius << "\" class=\"" << (is_helper(rounds, r) ? "helper" : "participant")
        << "\"/><text class=\"id\" x=\"" << number(c.x) << "\" y=\"" << number(c.y + 4) << "\">" << r << "</text>";
    const double x0 = c.x - bar * static_cast<double>(chunks) / 2;
    for (std::size_t k = 0; k < chunks; ++k) {
      const int held = rounds.held(state, r, k);
      const double share = static_cast<double>(held) / std::max(1, rounds.participants);
      out << "<rect class=\"chunk\" data-state=\"" << state << "\" data-rank=\"" << r << "\" data-chunk=\"" << k
          << "\" data-held=\"" << held << "\"";
      std::string shown;
      if (!request.values.empty()) {
        shown = value_text(held_value(rounds, request.values, state, r, k));
        out << " data-value=\"" << shown << "\"";
      }
      out << " x=\"" << number(x0 + bar * static_cast<double>(k)) << "\" y=\"" << number(c.y + node_radius + 3)
          << "\" width=\"" << number(bar) << "\" height=\"8\" fill=\"" << fill_colour(share) << "\"><title>rank " << r
          << " chunk " << k << ": " << held << " contribution" << (held == 1 ? "" : "s")
          << (shown.empty() ? "" : ", value " + shown) << "</title></rect>";
      if (show_values && held > 0) {
        out << "<text class=\"value\" x=\"" << number(x0 + bar * (static_cast<double>(k) + 0.5)) << "\" y=\""
            << number(c.y + node_radius + 21) << "\">" << shown << "</text>";
      }
    }
    out << "</g>";
  }
  out << "</g>";
  return out.str();
}

const char* style =
    "text{font-family:sans-serif;font-size:11px;fill:#222}"
    ".title{font-size:13px;font-weight:bold}.when{fill:#555}"
    ".id{text-anchor:middle;font-size:11px}.label{text-anchor:middle;font-size:9px;fill:#333}"
    ".value{text-anchor:middle;font-size:10px;font-weight:bold;fill:#08306b}"
    "circle.participant{fill:#f7f7f7;stroke:#333}circle.helper{fill:#fde0dd;stroke:#c51b8a}"
    "line.reduce{stroke:#d95f02;stroke-width:1.6}line.copy{stroke:#1b9e77;stroke-width:1.6}"
    "rect.chunk{stroke:#555;stroke-width:0.5}rect.node{fill:none;stroke:#aaa;stroke-dasharray:4 3}"
    ".frame{fill:#fff;stroke:#ddd}";

std::string defs() {
  return "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" "
         "markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#444\"/></marker>"
         "</defs>";
}

std::string legend_text(const Schedule& s, const ScheduleRounds& rounds, const DrawingRequest& request) {
  std::string text = "orange: received into a sum; green: a copy; a chunk's colour: its share of the " +
                     std::to_string(rounds.participants) + " contributions (white: none, dark blue: all)";
  if (!request.values.empty()) text += "; numbers: the sums the chunks hold";
  if (!request.timed_by.empty()) text += "; times: " + request.timed_by;
  (void)s;
  return text;
}

}  // namespace

const char* to_string(DrawLayout layout) {
  switch (layout) {
    case DrawLayout::circle: return "circle";
    case DrawLayout::tree: return "tree";
    case DrawLayout::hypercube: return "hypercube";
    case DrawLayout::hub: return "hub";
    case DrawLayout::nodes: return "nodes";
  }
  return "?";
}

DrawLayout layout_for(const std::string& algorithm, int ranks) {
  if (algorithm == "tree" || algorithm == "pipelined-tree" || algorithm == "dbtree" || algorithm == "chain-dbtree") {
    return DrawLayout::tree;
  }
  if (algorithm == "butterfly" || algorithm == "rabenseifner") {
    return (ranks & (ranks - 1)) == 0 ? DrawLayout::hypercube : DrawLayout::circle;
  }
  if (algorithm == "ps") return DrawLayout::hub;
  if (algorithm == "hierarchical" || algorithm == "nvls" || algorithm == "nvls-tree" || algorithm == "sharp") {
    return DrawLayout::nodes;
  }
  return DrawLayout::circle;
}

std::string schedule_svg(const Schedule& schedule, const ScheduleRounds& rounds, const DrawingRequest& request) {
  const std::vector<Point> at = place(rounds, request);
  const int panels = rounds.rounds + 1;
  const int columns = std::min(panels, 4);
  const int rows = (panels + columns - 1) / columns;
  const double header = 44;
  const double width = columns * panel_width, height = header + rows * panel_height;
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << number(width, "%.0f") << "\" height=\""
      << number(height, "%.0f") << "\" viewBox=\"0 0 " << number(width, "%.0f") << ' ' << number(height, "%.0f")
      << "\" data-rounds=\"" << rounds.rounds << "\" data-ranks=\"" << rounds.ranks << "\" data-chunks=\""
      << rounds.chunks << "\" data-layout=\"" << to_string(request.layout) << "\"><style>" << style << "</style>"
      << defs() << "<text x=\"8\" y=\"18\" class=\"title\">" << escape_xml(request.title) << "</text><text x=\"8\" "
      << "y=\"36\">" << escape_xml(legend_text(schedule, rounds, request)) << "</text>";
  for (int i = 0; i < panels; ++i) {
    const double x = (i % columns) * panel_width, y = header + (i / columns) * panel_height;
    out << "<g class=\"panel\" data-panel=\"" << i << "\" transform=\"translate(" << number(x) << ',' << number(y)
        << ")\"><rect class=\"frame\" x=\"1\" y=\"1\" width=\"" << panel_width - 2 << "\" height=\"" << panel_height - 2
        << "\"/>" << panel(schedule, rounds, request, at, i - 1) << "</g>";
  }
  out << "</svg>\n";
  return out.str();
}

std::string schedule_html(const Schedule& schedule, const ScheduleRounds& rounds, const DrawingRequest& request) {
  const std::vector<Point> at = place(rounds, request);
  const int panels = rounds.rounds + 1;
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << escape_xml(request.title)
      << "</title><style>body{font-family:sans-serif;margin:16px;color:#222}.step{display:none}.step.shown{display:"
         "block}button{margin-right:6px;font-size:14px}#where{margin-left:8px}"
      << "</style></head><body><h1 style=\"font-size:18px\">" << escape_xml(request.title) << "</h1><p>"
      << escape_xml(legend_text(schedule, rounds, request))
      << "</p><p><button id=\"previous\">previous</button><button id=\"next\">next</button><button "
         "id=\"play\">play</button><span id=\"where\"></span></p>\n";
  for (int i = 0; i < panels; ++i) {
    out << "<div class=\"step" << (i == 0 ? " shown" : "") << "\" data-panel=\"" << i
        << "\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << panel_width << "\" height=\"" << panel_height
        << "\" viewBox=\"0 0 " << panel_width << ' ' << panel_height << "\"><style>" << style << "</style>" << defs()
        << panel(schedule, rounds, request, at, i - 1) << "</svg></div>\n";
  }
  out << "<script>(function(){var steps=document.querySelectorAll('.step'),at=0,timer=null;"
         "function show(i){steps[at].classList.remove('shown');at=(i+steps.length)%steps.length;"
         "steps[at].classList.add('shown');document.getElementById('where').textContent=(at===0?'start':"
         "'round '+at+' of '+(steps.length-1));document.body.setAttribute('data-shown',at);}"
         "document.getElementById('previous').onclick=function(){show(at-1);};"
         "document.getElementById('next').onclick=function(){show(at+1);};"
         "document.getElementById('play').onclick=function(){if(timer){clearInterval(timer);timer=null;return;}"
         "timer=setInterval(function(){if(at+1>=steps.length){clearInterval(timer);timer=null;return;}show(at+1);},"
         "900);};show(0);if(location.hash==='#play')document.getElementById('play').click();})();</script>\n</body></"
         "html>\n";
  return out.str();
}

std::string schedule_summary_svg(const Schedule& schedule, const ScheduleRounds& rounds,
                                 const DrawingRequest& request) {
  // bytes moved per round, as bars
  StackedBars bars;
  bars.title = request.title + ": bytes moved per round";
  bars.x_label = "round";
  bars.y = PlotAxis{};
  bars.y.label = "bytes";
  bars.parts = {"reductions", "copies"};
  std::vector<std::vector<double>> per_round(static_cast<std::size_t>(rounds.rounds), {0.0, 0.0});
  for (const RoundTransfer& t : rounds.transfers)
    per_round[static_cast<std::size_t>(t.round)][t.reduce ? 0 : 1] += static_cast<double>(t.bytes);
  for (int k = 0; k < rounds.rounds; ++k) {
    bars.categories.push_back(std::to_string(k + 1));
    bars.values.push_back(per_round[static_cast<std::size_t>(k)]);
  }
  (void)schedule;
  return render_stacked_bars(bars);
}

}  // namespace dtsim
