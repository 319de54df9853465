#include "models/calibration.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim {

NetworkRange reference_network(const std::vector<NetworkRange>& ranges) {
  if (ranges.empty()) throw std::invalid_argument("calibration: no network ranges");
  NetworkRange reference{0, 0, ranges.back().bandwidth_Bps};
  for (const NetworkRange& r : ranges) reference.alpha_s = std::max(reference.alpha_s, r.alpha_s);
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
