// Timelines for Perfetto and chrome://tracing: Chrome trace-event JSON (the JSON object format, {"traceEvents":
// [...]}). Process 1 ("ranks") has two tracks per rank: its steps and computation (step, reduce, forward, backward,
// optimizer, input stall) and its communication (allreduce buckets); process 2 ("links") has one track per busy link
// with its busy intervals. Every interval is a complete event ("ph": "X", "ts" and "dur" in microseconds); tracks are
// named by metadata events ("ph": "M").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/executor.hpp"
#include "sim/link_usage.hpp"

namespace dtsim {

// `links`: the busy links to show (e.g. the first few of star_link_usage's list), in the order given.
nlohmann::json trace_events(const RunTrace& trace, int ranks, const std::vector<LinkUsage>& links,
                            const std::string& title);

// Writes trace_events(trace, ranks, the first `most_links` of links, title) to `path` atomically; throws
// std::runtime_error naming the path when it cannot.
void write_trace_file(const std::string& path, const RunTrace& trace, int ranks, const std::vector<LinkUsage>& links,
                      const std::string& title, std::size_t most_links = 64);

}  // namespace dtsim
