#include "scenarios/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "scenarios/input_file.hpp"

namespace dtsim {
namespace {

// The whole decompressed file.
std::vector<std::uint8_t> gunzip(const std::string& path, const std::string& package) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw DataError(path + ": not found; install Debian's " + package + " package (apt-get install " + package + ")");
  }
  if (const std::string problem = input_file_problem(path); !problem.empty()) throw DataError(problem);
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) throw DataError(path + ": cannot open");
  std::vector<std::uint8_t> out;
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const int n = gzread(file.get(), buffer, sizeof buffer);
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(file.get(), &code);
      throw DataError(path + ": corrupt gzip data (" + std::string(message ? message : "unknown error") + ")");
    }
    if (n == 0) break;
    out.insert(out.end(), buffer, buffer + n);
  }
  return out;
}

std::uint32_t big_endian(const std::vector<std::uint8_t>& bytes, std::size_t at) {
  return (static_cast<std::uint32_t>(bytes[at]) << 24) | (static_cast<std::uint32_t>(bytes[at + 1]) << 16) |
         (static_cast<std::uint32_t>(bytes[at + 2]) << 8) | static_cast<std::uint32_t>(bytes[at + 3]);
}

// Checks the magic number and the dimensions of an IDX file of unsigned bytes; returns the dimensions.
std::vector<std::uint32_t> header(const std::vector<std::uint8_t>& bytes, const std::string& path,
                                  std::uint32_t dimensions) {
  const std::size_t header_bytes = 4 + 4 * static_cast<std::size_t>(dimensions);
  if (bytes.size() < header_bytes) throw DataError(path + ": truncated IDX header");
  const std::uint32_t magic = big_endian(bytes, 0);
  if (magic != (0x0800U | dimensions)) {
    throw DataError(path + ": not an IDX file of " + std::to_string(dimensions) + "-dimensional unsigned bytes");
  }
  std::vector<std::uint32_t> dims;
  std::size_t expected = 1;
  for (std::uint32_t d = 0; d < dimensions; ++d) {
    dims.push_back(big_endian(bytes, 4 + 4 * static_cast<std::size_t>(d)));
    if (dims.back() == 0 || dims.back() > (1U << 24)) throw DataError(path + ": implausible IDX dimension");
    expected *= dims.back();
  }
  if (bytes.size() != header_bytes + expected) {
    throw DataError(path + ": truncated or padded IDX data (" + std::to_string(bytes.size() - header_bytes) +
                    " bytes for " + std::to_string(expected) + ")");
  }
  return dims;
}

}  // namespace

Dataset read_idx_dataset(const std::string& images_path, const std::string& labels_path, const std::string& package,
                         int classes) {
  const std::vector<std::uint8_t> images = gunzip(images_path, package);
  const std::vector<std::uint8_t> labels = gunzip(labels_path, package);
  const std::vector<std::uint32_t> image_dims = header(images, images_path, 3);
  const std::vector<std::uint32_t> label_dims = header(labels, labels_path, 1);
  if (image_dims[0] != label_dims[0]) {
    throw DataError(labels_path + ": " + std::to_string(label_dims[0]) + " labels for " +
                    std::to_string(image_dims[0]) + " images");
  }
  Dataset d;
  d.count = static_cast<int>(image_dims[0]);
  d.features = static_cast<int>(image_dims[1] * image_dims[2]);
  d.images.resize(static_cast<std::size_t>(d.count) * static_cast<std::size_t>(d.features));
  for (std::size_t i = 0; i < d.images.size(); ++i)
    d.images[i] = static_cast<float>(images[16 + i]) / 255.0F;
  d.labels.assign(labels.begin() + 8, labels.end());
  // a label outside the classes would index past the model's outputs: refused here, naming the file
  const auto bad = std::find_if(d.labels.begin(), d.labels.end(), [classes](std::uint8_t l) { return l >= classes; });
  if (bad != d.labels.end()) {
    const auto count = std::count_if(bad, d.labels.end(), [classes](std::uint8_t l) { return l >= classes; });
    throw DataError(
        labels_path + ": label " + std::to_string(*bad) + " of sample " + std::to_string(bad - d.labels.begin()) +
        " is not one of the " + std::to_string(classes) + " classes 0 to " + std::to_string(classes - 1) +
        " (samples with such labels: " + std::to_string(count) + " of " + std::to_string(d.labels.size()) + ")");
  }
  return d;
}

Dataset fashion_mnist_train(const std::string& directory) {
  return read_idx_dataset(directory + "/train-images-idx3-ubyte.gz", directory + "/train-labels-idx1-ubyte.gz",
                          "dataset-fashion-mnist", fashion_mnist_classes);
}

Dataset fashion_mnist_test(const std::string& directory) {
  return read_idx_dataset(directory + "/t10k-images-idx3-ubyte.gz", directory + "/t10k-labels-idx1-ubyte.gz",
                          "dataset-fashion-mnist", fashion_mnist_classes);
}

}  // namespace dtsim
