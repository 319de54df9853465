#include "reports/format.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

namespace dtsim {
namespace {

std::string scaled(double value, const std::array<const char*, 5>& units, double step) {
  std::size_t i = 0;
  while (i + 1 < units.size() && std::fabs(value) >= step) {
    value /= step;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", value, units[i]);
  return buf;
}

}  // namespace

std::string format_seconds(double seconds) {
  char buf[64];
  const double a = std::fabs(seconds);
  constexpr double hour = 3600, day = 86400, year = 365.25 * day;
  if (a >= 1e4 * year) {  // kept within 10 characters, as a table's column needs
    std::snprintf(buf, sizeof buf, "%.3g y", seconds / year);
  } else if (a >= 1e4 * day) {
    std::snprintf(buf, sizeof buf, "%.4g y", seconds / year);
  } else if (a >= 1e4 * hour) {
    std::snprintf(buf, sizeof buf, "%.4g d", seconds / day);
  } else if (a >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.4g h", seconds / hour);
  } else if (a == 0 || a >= 1) {
    std::snprintf(buf, sizeof buf, "%.4g s", seconds);
  } else if (a >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.4g ms", seconds * 1e3);
  } else if (a >= 1e-6) {
    std::snprintf(buf, sizeof buf, "%.4g us", seconds * 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g ns", seconds * 1e9);
  }
  return buf;
}

std::string format_throughput(double per_s) {
  if (std::fabs(per_s) >= 10 || per_s == 0) return format_fixed(per_s, 0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", per_s);
  return buf;
}

std::string format_bytes(std::uint64_t bytes) {
  return scaled(static_cast<double>(bytes), {"B", "KB", "MB", "GB", "TB"}, 1000.0);
}

std::string format_rate_Bps(double bytes_per_s) {
  return scaled(bytes_per_s, {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"}, 1000.0);
}

std::string format_count(double count) {
  static constexpr std::array<std::pair<double, const char*>, 5> units{
      {{1e15, "quadrillion"}, {1e12, "trillion"}, {1e9, "billion"}, {1e6, "million"}, {1e3, "thousand"}}};
  for (const auto& [scale, name] : units) {
    if (count >= scale) {
      char text[64];
      std::snprintf(text, sizeof text, "%.3g %s", count / scale, name);
      return text;
    }
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.0f", count);
  return text;
}

std::string format_bits_per_s(double bytes_per_s) {
  return scaled(bytes_per_s * 8, {"bit/s", "Kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"}, 1000.0);
}

std::string format_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}

std::string format_signed_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * fraction);
  return text;
}

std::string format_fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace dtsim
