// Output flags shared by commands: --csv (CSV on stdout, as --json prints JSON there) and the choices of a --trace
// file (whose ranks' tracks it holds, and how large it may grow).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/flags.hpp"
#include "sim/executor.hpp"
#include "sim/link_usage.hpp"

namespace dtsim::cli {

inline constexpr std::array<FlagSpec, 1> csv_flags{{
    {"csv", "", "",
     "print CSV instead of the table: one header row, one row per result, units in the column names "
     "(docs/reports.md); not with --json"},
}};

// The default --trace-max-bytes, in bytes (100 MB).
inline constexpr std::uint64_t default_trace_max_bytes = 100'000'000;

inline constexpr std::array<FlagSpec, 2> trace_flags{{
    {"trace-ranks", "WHICH", "classes",
     "--trace: the ranks whose tracks the file holds: classes (one rank of each class of ranks that did the same "
     "work, and the slowest rank), all, or a list of ranks like 0,5,17"},
    {"trace-max-bytes", "SIZE", "100MB",
     "--trace: the largest trace file to write; a larger one is refused (exit 2) before it is written"},
}};

// --csv and --json both print to stdout: the two together are a UsageError.
bool csv_output(const Flags& flags);

struct TraceRequest {
  std::string path;        // --trace FILE; empty: none
  bool all_ranks = false;  // --trace-ranks all
  std::vector<int> ranks;  // --trace-ranks 0,5,17 (empty, not all: classes)
  std::uint64_t max_bytes = default_trace_max_bytes;
};

// Reads --trace, --trace-ranks and --trace-max-bytes (the latter two need --trace).
TraceRequest parse_trace_request(const Flags& flags);
// A listed rank that the traced run does not have is a UsageError naming --trace-ranks (checked before a run where
// the rank count is known, and again when writing).
void check_trace_ranks(const TraceRequest& request, int ranks);

// Writes the trace of a run of `ranks` ranks (its `most_links` busiest links): picks the ranks, counts the file's
// bytes, refuses one above --trace-max-bytes (a UsageError naming both flags) and otherwise writes it, telling
// `note` (stderr) its size and which ranks it holds. A file that cannot be written is a UsageError naming --trace.
void write_trace_file(const TraceRequest& request, const RunTrace& trace, int ranks,
                      const std::vector<LinkUsage>& links, const std::string& title, std::ostream& note,
                      std::size_t most_links = 64);

}  // namespace dtsim::cli
