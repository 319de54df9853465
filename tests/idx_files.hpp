// Small uncompressed IDX files for the reader's tests (zlib reads plain files as they are).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace dtsim::test {

inline void write_big_endian(std::ofstream& out, std::uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                         static_cast<char>(v)};
  out.write(bytes, 4);
}

// `count` blank 28 x 28 images.
inline void write_idx_images(const std::string& path, std::uint32_t count) {
  std::ofstream out(path, std::ios::binary);
  for (std::uint32_t v : {0x0803U, count, 28U, 28U})
    write_big_endian(out, v);
  const std::string pixels(static_cast<std::size_t>(count) * 28 * 28, '\0');
  out.write(pixels.data(), static_cast<std::streamsize>(pixels.size()));
}

inline void write_idx_labels(const std::string& path, const std::vector<std::uint8_t>& labels) {
  std::ofstream out(path, std::ios::binary);
  write_big_endian(out, 0x0801U);
  write_big_endian(out, static_cast<std::uint32_t>(labels.size()));
  out.write(reinterpret_cast<const char*>(labels.data()), static_cast<std::streamsize>(labels.size()));
}

}  // namespace dtsim::test
