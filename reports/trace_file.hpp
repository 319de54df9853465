// Timelines for Perfetto and chrome://tracing: Chrome trace-event JSON (the JSON object format, {"traceEvents":
// [...]}). Process 1 ("ranks") has two tracks per rank shown: its steps and computation (step, reduce, forward,
// backward, optimizer, input stall) and its communication (allreduce buckets); process 2 ("links") has one track per
// busy link with its busy intervals. Every interval is a complete event ("ph": "X", "ts" and "dur" in microseconds);
// tracks are named by metadata events ("ph": "M"). "otherData" holds the title, the rank count and the ranks shown.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/executor.hpp"
#include "sim/link_usage.hpp"

namespace dtsim {

// Every rank's tracks. `links`: the busy links to show (e.g. the first few of star_link_usage's list), in order.
nlohmann::json trace_events(const RunTrace& trace, int ranks, const std::vector<LinkUsage>& links,
                            const std::string& title);

// Ranks that did the same work in the trace: the same spans (kind and bytes, in any order), whenever they ran them.
// Returns each rank's class, numbered from 0 in the order of the classes' smallest ranks.
std::vector<int> rank_classes(const RunTrace& trace, int ranks);
// The rank whose last span ends last (the smallest such), or 0 when the trace is empty.
int slowest_rank(const RunTrace& trace, int ranks);
// The smallest rank of every class, and the slowest rank, in increasing order.
std::vector<int> representative_ranks(const RunTrace& trace, int ranks);

// What a trace file holds: the tracks of the ranks `shown` (in [0, ranks), increasing) and of `links`.
struct TraceContent {
  const RunTrace* trace = nullptr;
  int ranks = 0;
  std::vector<int> shown;
  std::vector<LinkUsage> links;
  std::string title;
};

// Writes the trace file's text to `out`, event by event (nothing is held whole in memory).
void write_trace(std::ostream& out, const TraceContent& content);
// The bytes write_trace writes (counted, not stored).
std::uint64_t trace_bytes(const TraceContent& content);
// Writes it to `path` atomically; throws std::runtime_error naming the path when it cannot.
void write_trace_file(const std::string& path, const TraceContent& content);

}  // namespace dtsim
