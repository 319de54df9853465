// Strict parsing of quantities with units, used only at the edges (CLI flags, scenario files).
//   sizes:      B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024); a whole number of bytes
//   bandwidth:  bps, Kbps, Mbps, Gbps, Tbps (bits/s); Bps, KBps, MBps, GBps, TBps (bytes/s); > 0
//   durations:  s, ms, us, ns; >= 0
// The number comes first with no space: "100MB", "1.5GiB", "25Gbps", "1e-6s". Units are case-sensitive.
// Every parse has an accepted range (a default one that keeps the arithmetic behind it finite and exact, or the
// caller's); a value outside it, or one that overflows, is refused like a malformed one.
// Errors are std::invalid_argument with a message saying what is accepted (the form and the range).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim {

// Default ranges: sizes up to 2^53 bytes (8192 TiB, every whole number of bytes below it exact in a double),
// bandwidths from 1 bit/s to 10^18 bytes/s, durations up to 10^9 s.
inline constexpr std::uint64_t max_size_bytes = 1ULL << 53;
inline constexpr double min_bandwidth_Bps = 0.125;
inline constexpr double max_bandwidth_Bps = 1e18;
inline constexpr double max_duration_s = 1e9;

// The items of a comma-separated list, empty ones included ("a,,b" has three; "" has one, empty), for the caller to
// check and refuse.
std::vector<std::string> split_list(const std::string& text);

std::uint64_t parse_bytes(std::string_view text, std::uint64_t min = 0, std::uint64_t max = max_size_bytes);
double parse_bandwidth_Bps(std::string_view text, double min = min_bandwidth_Bps, double max = max_bandwidth_Bps);
double parse_seconds(std::string_view text, double min = 0, double max = max_duration_s);
// A long duration (a run, a restart): s, min, h, d (days), e.g. "30d", "10min"; in [min, max].
double parse_long_seconds(std::string_view text, double min = 0, double max = max_duration_s);
// A rate of events: per hour, day or year, e.g. "1.2e-5/h", "0.3/day", "2/year"; returns events per hour, >= 0. The
// unit is required (a bare number is refused).
double parse_rate_per_h(std::string_view text);

// A whole number in [min, max].
long long parse_integer(std::string_view text, long long min, long long max);
// A plain decimal number (optionally with an exponent, no unit) in [min, max], or in (min, max] when
// `min_exclusive`.
double parse_number(std::string_view text, double min, double max, bool min_exclusive = false);

// How the ranges read in messages: "1TiB", "1000TBps", "10s" (the largest unit that keeps the number readable).
std::string bytes_text(std::uint64_t bytes);
std::string bandwidth_text(double Bps);
std::string seconds_text(double seconds);

}  // namespace dtsim
