#include "cli/output_flags.hpp"

#include <algorithm>

#include "reports/format.hpp"
#include "reports/trace_file.hpp"
#include "scenarios/units.hpp"

namespace dtsim::cli {

namespace {

// "0, 4 and 7"
std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

}  // namespace

bool csv_output(const Flags& flags) {
  if (!flags.has("csv")) return false;
  if (flags.has("json")) throw UsageError("--csv: not with --json (both print to stdout: choose one)");
  return true;
}

TraceRequest parse_trace_request(const Flags& flags) {
  TraceRequest request;
  if (!flags.has("trace")) {
    for (const char* name : {"trace-ranks", "trace-max-bytes"}) {
      if (flags.has(name)) throw UsageError("--" + std::string(name) + ": needs --trace");
    }
    return request;
  }
  request.path = flags.get("trace");
  const std::string which = flags.get("trace-ranks");
  if (which == "all") {
    request.all_ranks = true;
  } else if (which != "classes") {
    request.ranks = flags.parse("trace-ranks", [](const std::string& v) {
      std::vector<int> ranks;
      for (const std::string& one : split(v)) {
        try {
          ranks.push_back(static_cast<int>(parse_integer(one, 0, 1 << 30)));
        } catch (const std::invalid_argument&) {
          throw std::invalid_argument("expected classes, all or a list of ranks like 0,5,17, got '" + v + "'");
        }
      }
      if (ranks.empty()) throw std::invalid_argument("expected classes, all or a list of ranks like 0,5,17, got ''");
      std::sort(ranks.begin(), ranks.end());
      if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {  // (as every list flag)
        throw std::invalid_argument("'" + v + "' lists the same value twice; give each once");
      }
      return ranks;
    });
  }
  request.max_bytes = flags.bytes("trace-max-bytes", 1, max_size_bytes);
  return request;
}

void check_trace_ranks(const TraceRequest& request, int ranks) {
  if (!request.ranks.empty() && request.ranks.back() >= ranks) {
    throw UsageError("--trace-ranks: rank " + std::to_string(request.ranks.back()) + " is not in the traced run of " +
                     std::to_string(ranks) + " ranks (0 to " + std::to_string(ranks - 1) + ")");
  }
}

void write_trace_file(const TraceRequest& request, const RunTrace& trace, int ranks,
                      const std::vector<LinkUsage>& links, const std::string& title, std::ostream& note,
                      std::size_t most_links) {
  check_trace_ranks(request, ranks);
  TraceContent content;
  content.trace = &trace;
  content.ranks = ranks;
  content.title = title;
  content.links.assign(links.begin(), links.begin() + static_cast<std::ptrdiff_t>(std::min(most_links, links.size())));
  std::string which;
  if (request.all_ranks) {
    for (int r = 0; r < ranks; ++r)
      content.shown.push_back(r);
    which = "all " + std::to_string(ranks) + " ranks";
  } else if (!request.ranks.empty()) {
    content.shown = request.ranks;
    which =
        (content.shown.size() == 1 ? "rank " : "ranks ") + rank_list(content.shown) + " of " + std::to_string(ranks);
  } else {
    content.shown = representative_ranks(trace, ranks);
    const std::vector<int> classes = rank_classes(trace, ranks);
    const int class_count = classes.empty() ? 0 : *std::max_element(classes.begin(), classes.end()) + 1;
    which = (content.shown.size() == 1 ? "rank " : "ranks ") + rank_list(content.shown) + " of " +
            std::to_string(ranks) + ", the first of each of " + std::to_string(class_count) +
            (class_count == 1 ? " class" : " classes") + " of ranks that did the same work and the slowest (rank " +
            std::to_string(slowest_rank(trace, ranks)) + "; --trace-ranks all for every rank)";
  }
  const std::uint64_t bytes = trace_bytes(content);
  const std::string what =
      which + (content.links.empty() ? "" : "; " + std::to_string(content.links.size()) + " busiest links");
  if (bytes > request.max_bytes) {
    throw UsageError("--trace: " + request.path + " would be " + format_bytes(bytes) + ", above --trace-max-bytes " +
                     format_bytes(request.max_bytes) + " (" + what +
                     "): choose fewer ranks with --trace-ranks or raise --trace-max-bytes");
  }
  try {
    dtsim::write_trace_file(request.path, content);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--trace: ") + e.what());
  }
  note << "dtsim: wrote " << request.path << " (" << format_bytes(bytes) << "): " << what << '\n';
}

}  // namespace dtsim::cli
