#include "reports/trace_file.hpp"

#include "reports/output_file.hpp"

namespace dtsim {

namespace {

constexpr int ranks_pid = 1;
constexpr int links_pid = 2;

nlohmann::json name_event(const char* what, int pid, int tid, const std::string& name) {
  nlohmann::json e{{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

nlohmann::json complete(const std::string& name, int pid, int tid, double start_s, double end_s) {
  return {{"name", name}, {"ph", "X"},           {"pid", pid},
          {"tid", tid},   {"ts", start_s * 1e6}, {"dur", std::max(0.0, end_s - start_s) * 1e6}};
}

bool communication(SpanKind kind) { return kind == SpanKind::allreduce || kind == SpanKind::exchange; }

}  // namespace

nlohmann::json trace_events(const RunTrace& trace, int ranks, const std::vector<LinkUsage>& links,
                            const std::string& title) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(name_event("process_name", ranks_pid, -1, "ranks"));
  events.push_back(name_event("process_name", links_pid, -1, "links"));
  for (int r = 0; r < ranks; ++r) {
    events.push_back(name_event("thread_name", ranks_pid, 2 * r, "rank " + std::to_string(r)));
    events.push_back(name_event("thread_name", ranks_pid, 2 * r + 1, "rank " + std::to_string(r) + " comm"));
  }
  std::vector<int> step_of(static_cast<std::size_t>(ranks), 0);
  for (const SpanRecord& s : trace.spans) {
    const int tid = 2 * s.rank + (communication(s.kind) ? 1 : 0);
    std::string name = to_string(s.kind);
    if (s.kind == SpanKind::step) name += " " + std::to_string(step_of[static_cast<std::size_t>(s.rank)]++);
    nlohmann::json e = complete(name, ranks_pid, tid, s.start_s, s.end_s);
    if (s.bytes > 0) e["args"] = {{"bytes", s.bytes}};
    events.push_back(std::move(e));
  }
  for (std::size_t l = 0; l < links.size(); ++l) {
    const LinkUsage& link = links[l];
    const int tid = static_cast<int>(l);
    events.push_back(name_event("thread_name", links_pid, tid, link.name));
    for (const auto& [start, end] : link.busy) {
      nlohmann::json e = complete("busy", links_pid, tid, start, end);
      e["args"] = {{"link_bytes", link.bytes}, {"link_busy_fraction", link.busy_fraction}};
      events.push_back(std::move(e));
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", {{"title", title}}}};
}

void write_trace_file(const std::string& path, const RunTrace& trace, int ranks, const std::vector<LinkUsage>& links,
                      const std::string& title, std::size_t most_links) {
  const std::vector<LinkUsage> shown(links.begin(),
                                     links.begin() + static_cast<std::ptrdiff_t>(std::min(most_links, links.size())));
  const nlohmann::json doc = trace_events(trace, ranks, shown, title);
  write_file_atomically(path, [&](std::ostream& file) { file << doc.dump() << '\n'; });
}

}  // namespace dtsim
