// A labelled data set in memory: samples of `features` floats and one class label each.
#pragma once

#include <cstdint>
#include <vector>

namespace dtsim {

struct Dataset {
  int count = 0;
  int features = 0;           // e.g. rows x columns of an image
  std::vector<float> images;  // count x features, sample after sample, scaled to [0, 1]
  std::vector<std::uint8_t> labels;
};

}  // namespace dtsim
