// What every fuzz target of a loader promises: any bytes either load or are refused with the loader's own one-line
// error (the exception type the CLI turns into exit 2). Anything else escapes: under libFuzzer an escaping exception
// ends in std::terminate, a crash it reports and keeps; replay_main.cpp reports it with the input's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dtsim::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `load`, swallowing only `CleanError`.
template <class CleanError, class Load>
void expect_clean(Load load) {
  try {
    load();
  } catch (const CleanError&) {
  }
}

}  // namespace dtsim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
