// Replays inputs through a fuzz target without libFuzzer (any compiler): every regular file under the paths given
// (files or folders, recursively), in sorted order. Fails naming the input when an exception escapes the target, and
// when no input was found (a regression check over nothing would pass by accident).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else if (std::filesystem::is_regular_file(path)) {
      inputs.push_back(path);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs under the paths given\n");
    return 1;
  }
  for (const auto& input : inputs) {
    std::ifstream file(input, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    try {
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "replay: %s: escaped: %s\n", input.c_str(), e.what());
      return 1;
    } catch (...) {
      std::fprintf(stderr, "replay: %s: escaped: a non-standard exception\n", input.c_str());
      return 1;
    }
  }
  std::printf("replay: %zu inputs, each loaded or refused cleanly\n", inputs.size());
  return 0;
}
