// Strict parsing of quantities with units, used only at the edges (CLI flags, scenario files).
//   sizes:      B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024); a whole number of bytes
//   bandwidth:  bps, Kbps, Mbps, Gbps, Tbps (bits/s); Bps, KBps, MBps, GBps, TBps (bytes/s); > 0
//   durations:  s, ms, us, ns; >= 0
// The number comes first with no space: "100MB", "1.5GiB", "25Gbps", "1e-6s". Units are case-sensitive.
// Errors are std::invalid_argument with a message saying what is accepted.
#pragma once

#include <cstdint>
#include <string_view>

namespace dtsim {

std::uint64_t parse_bytes(std::string_view text);
double parse_bandwidth_Bps(std::string_view text);
double parse_seconds(std::string_view text);
// A whole number in [min, max].
long long parse_integer(std::string_view text, long long min, long long max);

}  // namespace dtsim
