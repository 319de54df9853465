#include "reports/trace_file.hpp"

#include <algorithm>
#include <map>
#include <streambuf>
#include <utility>

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

// Calls emit(event) for every event of the file, in file order: the tracks of the shown ranks, then the links'.
template <typename Emit>
void for_each_event(const TraceContent& c, Emit emit) {
  emit(name_event("process_name", ranks_pid, -1, "ranks"));
  emit(name_event("process_name", links_pid, -1, "links"));
  std::vector<bool> shown(static_cast<std::size_t>(std::max(0, c.ranks)), false);
  for (int r : c.shown) {
    shown[static_cast<std::size_t>(r)] = true;
    emit(name_event("thread_name", ranks_pid, 2 * r, "rank " + std::to_string(r)));
    emit(name_event("thread_name", ranks_pid, 2 * r + 1, "rank " + std::to_string(r) + " comm"));
  }
  std::vector<int> step_of(shown.size(), 0);
  for (const SpanRecord& s : c.trace->spans) {
    const auto rank = static_cast<std::size_t>(s.rank);
    if (rank >= shown.size() || !shown[rank]) continue;
    const int tid = 2 * s.rank + (communication(s.kind) ? 1 : 0);
    std::string name = to_string(s.kind);
    if (s.kind == SpanKind::step) name += " " + std::to_string(step_of[rank]++);
    nlohmann::json e = complete(name, ranks_pid, tid, s.start_s, s.end_s);
    if (s.bytes > 0) e["args"] = {{"bytes", s.bytes}};
    emit(std::move(e));
  }
  for (std::size_t l = 0; l < c.links.size(); ++l) {
    const LinkUsage& link = c.links[l];
    const int tid = static_cast<int>(l);
    emit(name_event("thread_name", links_pid, tid, link.name));
    for (const auto& [start, end] : link.busy) {
      nlohmann::json e = complete("busy", links_pid, tid, start, end);
      e["args"] = {{"link_bytes", link.bytes}, {"link_busy_fraction", link.busy_fraction}};
      emit(std::move(e));
    }
  }
}

// A stream buffer that only counts what is written to it.
class CountingBuffer : public std::streambuf {
public:
  std::uint64_t count() const { return count_; }

protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) ++count_;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    count_ += static_cast<std::uint64_t>(n);
    return n;
  }

private:
  std::uint64_t count_ = 0;
};

}  // namespace

nlohmann::json trace_events(const RunTrace& trace, int ranks, const std::vector<LinkUsage>& links,
                            const std::string& title) {
  TraceContent content{&trace, ranks, {}, links, title};
  for (int r = 0; r < ranks; ++r)
    content.shown.push_back(r);
  nlohmann::json events = nlohmann::json::array();
  for_each_event(content, [&events](nlohmann::json&& e) { events.push_back(std::move(e)); });
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", {{"title", title}}}};
}

std::vector<int> rank_classes(const RunTrace& trace, int ranks) {
  std::vector<std::vector<std::pair<int, std::uint64_t>>> work(static_cast<std::size_t>(std::max(0, ranks)));
  for (const SpanRecord& s : trace.spans) {
    if (s.rank >= 0 && s.rank < ranks)
      work[static_cast<std::size_t>(s.rank)].emplace_back(static_cast<int>(s.kind), s.bytes);
  }
  std::map<std::vector<std::pair<int, std::uint64_t>>, int> class_of_work;
  std::vector<int> classes(work.size());
  for (std::size_t r = 0; r < work.size(); ++r) {
    std::sort(work[r].begin(), work[r].end());
    const auto [it, added] = class_of_work.try_emplace(std::move(work[r]), static_cast<int>(class_of_work.size()));
    classes[r] = it->second;
  }
  return classes;
}

int slowest_rank(const RunTrace& trace, int ranks) {
  std::vector<double> end(static_cast<std::size_t>(std::max(0, ranks)), -1.0);
  for (const SpanRecord& s : trace.spans) {
    if (s.rank >= 0 && s.rank < ranks)
      end[static_cast<std::size_t>(s.rank)] = std::max(end[static_cast<std::size_t>(s.rank)], s.end_s);
  }
  if (end.empty()) return 0;
  return static_cast<int>(std::max_element(end.begin(), end.end()) - end.begin());
}

std::vector<int> representative_ranks(const RunTrace& trace, int ranks) {
  const std::vector<int> classes = rank_classes(trace, ranks);
  std::vector<int> out;
  std::vector<bool> seen;
  for (int r = 0; r < ranks; ++r) {
    const auto c = static_cast<std::size_t>(classes[static_cast<std::size_t>(r)]);
    if (c >= seen.size()) seen.resize(c + 1, false);
    if (!seen[c]) out.push_back(r);
    seen[c] = true;
  }
  if (ranks > 0) out.push_back(slowest_rank(trace, ranks));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void write_trace(std::ostream& out, const TraceContent& content) {
  const nlohmann::json head{
      {"displayTimeUnit", "ms"},
      {"otherData", {{"title", content.title}, {"ranks", content.ranks}, {"ranks_shown", content.shown}}}};
  std::string text = head.dump();
  text.pop_back();  // the closing brace: the events follow
  out << text << ",\"traceEvents\":[";
  bool first = true;
  for_each_event(content, [&](nlohmann::json&& e) {
    if (!first) out << ',';
    first = false;
    out << e.dump();
  });
  out << "]}\n";
}

std::uint64_t trace_bytes(const TraceContent& content) {
  CountingBuffer counter;
  std::ostream out(&counter);
  write_trace(out, content);
  return counter.count();
}

void write_trace_file(const std::string& path, const TraceContent& content) {
  write_file_atomically(path, [&](std::ostream& file) { write_trace(file, content); });
}

}  // namespace dtsim
