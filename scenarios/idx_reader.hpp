// IDX files (the MNIST format), gzip-compressed, read with zlib: images as floats in [0, 1], labels as bytes.
// Errors are one-line DataErrors naming the file and what is wrong (missing, corrupt, truncated).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/dataset.hpp"

namespace dtsim {

struct DataError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Reads an images file (magic 0x00000803) and its labels file (0x00000801); they must agree on the count, and every
// label must be one of the `classes` classes (0 to classes - 1). A missing file names `package` (the Debian package
// that provides it).
Dataset read_idx_dataset(const std::string& images_path, const std::string& labels_path, const std::string& package,
                         int classes);

// Fashion-MNIST's classes (T-shirt/top to ankle boot).
inline constexpr int fashion_mnist_classes = 10;

// Fashion-MNIST from Debian's dataset-fashion-mnist package (or `directory` holding the same four files).
inline constexpr const char* fashion_mnist_directory = "/usr/share/datasets/fashion-mnist";
Dataset fashion_mnist_train(const std::string& directory = fashion_mnist_directory);
Dataset fashion_mnist_test(const std::string& directory = fashion_mnist_directory);

}  // namespace dtsim
