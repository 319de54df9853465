#include "models/alpha_beta.hpp"

namespace dtsim {

double ring_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  if (ranks <= 1 || bytes == 0) return 0.0;
  const double p = ranks;
  const double n = static_cast<double>(bytes);
  return 2.0 * (p - 1.0) * (cost.alpha_s + n / (p * cost.bandwidth_Bps)) + (p - 1.0) * n / (p * cost.reduce_Bps);
}

double allreduce_bus_factor(int ranks) { return ranks <= 1 ? 0.0 : 2.0 * (ranks - 1.0) / ranks; }

}  // namespace dtsim
