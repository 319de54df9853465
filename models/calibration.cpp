#include "models/calibration.hpp"

#include "models/devices.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim {

Device calibrated_device(const Calibration& c) {
  Device d;
  d.name = "calibrated";
  d.source = "dtsim calibrate on " + c.cpu + ", " + c.date;
  d.origin = "calibration";
  d.kind = DeviceKind::cpu;
  d.set_peak_flops(Precision::fp32, c.gemm_flops_per_s);  // fp32 GEMMs measured; no other math
  d.memory_Bps = c.memory_Bps;
  d.memory_bytes = c.memory_bytes;
  d.efficiency = 1.0;
  d.kernel_launch_s = c.kernel_overhead_s / 4;
  return d;
}

NetworkRange reference_network(const std::vector<NetworkRange>& ranges) {
  if (ranges.empty()) throw std::invalid_argument("calibration: no network ranges");
  NetworkRange reference{0, 0, ranges.back().bandwidth_Bps};
  for (const NetworkRange& r : ranges)
    reference.alpha_s = std::max(reference.alpha_s, r.alpha_s);
  return reference;
}

std::vector<FactorRange> network_factors(const std::vector<NetworkRange>& ranges) {
  std::vector<FactorRange> factors;
  if (ranges.empty()) return factors;
  const NetworkRange reference = reference_network(ranges);
  for (const NetworkRange& r : ranges) {
    factors.push_back(FactorRange{r.min_bytes, reference.alpha_s > 0 ? r.alpha_s / reference.alpha_s : 1.0,
                                  r.bandwidth_Bps / reference.bandwidth_Bps});
  }
  return factors;
}

FactorRange factors_for(const std::vector<FactorRange>& factors, double bytes) {
  FactorRange chosen;
  if (!factors.empty()) chosen = factors.front();  // messages below the first range take its factors
  for (const FactorRange& f : factors) {
    if (bytes >= f.min_bytes) chosen = f;
  }
  return chosen;
}

}  // namespace dtsim
