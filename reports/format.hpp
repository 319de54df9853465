// Human-readable quantities for text output (the inverse of scenarios/units, for display only).
#pragma once

#include <cstdint>
#include <string>

namespace dtsim {

std::string format_seconds(double seconds);          // "1.234 ms"; from 10^4 s on in h, d, y (365.25 d)
std::string format_throughput(double per_s);         // 2783.4 -> "2783", 2.5 -> "2.5", 1.1e-06 -> "1.1e-06"
std::string format_bytes(std::uint64_t bytes);       // "100 MB" (decimal units)
std::string format_rate_Bps(double bytes_per_s);     // "1.25 GB/s"
std::string format_bits_per_s(double bytes_per_s);   // "10 Gbit/s"
std::string format_count(double count);              // "4.3 billion", "25.6 million", "950"
std::string format_percent(double fraction);         // 0.0512 -> "5.1%"
std::string format_signed_percent(double fraction);  // 0.0512 -> "+5.1%"
std::string format_fixed(double value, int digits);  // (1.23456, 2) -> "1.23"

}  // namespace dtsim
