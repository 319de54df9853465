#include "sim/executor.hpp"

#include <sys/resource.h>

namespace dtsim {

const char* to_string(SpanKind kind) {
  switch (kind) {
    case SpanKind::step: return "step";
    case SpanKind::reduce: return "reduce";
    case SpanKind::forward: return "forward";
    case SpanKind::backward: return "backward";
    case SpanKind::optimizer: return "optimizer";
    case SpanKind::allreduce: return "allreduce";
    case SpanKind::input_stall: return "input stall";
    case SpanKind::gradient: return "gradient";
    case SpanKind::exchange: return "push and pull";
  }
  return "?";
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

}  // namespace dtsim
