// Fuzz target: IDX data (images and labels, gzip or plain) as `dtsim train` reads them. The input is both files: its
// first byte says where the images end (as a share of the rest), so the fuzzer mutates their headers and counts
// against each other. The two files live in a folder of this process, removed at exit.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "scenarios/idx_reader.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("dtsim-fuzz-idx-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] { std::filesystem::remove_all(work_dir()); });
    return d;
  }();
  return dir;
}

void write(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t rest = size - 1;
  const std::size_t split = rest * data[0] / 255;
  const auto images = work_dir() / "images";
  const auto labels = work_dir() / "labels";
  write(images, data + 1, split);
  write(labels, data + 1 + split, rest - split);
  dtsim::fuzz::expect_clean<dtsim::DataError>(
      [&] { (void)dtsim::read_idx_dataset(images.string(), labels.string(), "fuzz", 10); });
  return 0;
}
