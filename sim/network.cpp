#include "sim/network.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dtsim {

std::unique_ptr<Topology> place_on_star(NetworkCost& network, int positions) {
  if (network.topology != nullptr) return nullptr;
  if (positions < 1) throw std::invalid_argument("star: needs >= 1 position, got " + std::to_string(positions));
  if (!network.accelerator_of.empty() && network.accelerator_of.size() != static_cast<std::size_t>(positions)) {
    throw std::invalid_argument("star: " + std::to_string(positions) + " positions but " +
                                std::to_string(network.accelerator_of.size()) + " are placed on the star's hosts");
  }
  if (network.accelerator_of.empty()) {
    network.accelerator_of.resize(static_cast<std::size_t>(positions));
    std::iota(network.accelerator_of.begin(), network.accelerator_of.end(), 0);
  }
  int hosts = 0;
  for (const int h : network.accelerator_of) {
    if (h < 0) throw std::invalid_argument("star: a position placed on host " + std::to_string(h));
    hosts = std::max(hosts, h + 1);
  }
  const LinkSpec link{network.cost.bandwidth_Bps, network.cost.alpha_s / 2.0, network.cost.gap_s};
  std::unique_ptr<Topology> star = Topology::star(hosts, link, network.cost.reduce_Bps);
  network.topology = star.get();
  return star;
}

}  // namespace dtsim
