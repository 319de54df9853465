// How far the classes of an all-pairs algorithm found from a network's symmetry can be trusted
// (sim/all_pairs_lumping.hpp).
#pragma once

#include <cstdint>

namespace dtsim::lumping {

// From the most exact to the least:
//   exact: a star (the alpha-beta star, or a cluster whose fabric is one switch), or a fat-tree without rails whose
//     switches of each level all fall in one class (every leaf and pod alike: D-mod-k then loads the links of a class
//     equally; tests/test_all_pairs.cpp finds the full engine's times to 1e-9);
//   averaged: a fat-tree without rails whose leaves or pods differ (partly filled): each link gets its class's mean
//     load, measured within 0.7% on full-bisection fat-trees and up to 17% too fast on oversubscribed ones (the
//     fabric the bottleneck, D-mod-k loading some up-links of a class more than others);
//   unsupported: tori, rings, dragonflies and rail-optimised fat-trees, whose routes load links that refinement
//     cannot tell apart unequally (measured 11% to 44% too fast): run the written schedule instead.
enum class AllPairsFit : std::uint8_t { exact, averaged, unsupported };
const char* to_string(AllPairsFit fit);

}  // namespace dtsim::lumping
