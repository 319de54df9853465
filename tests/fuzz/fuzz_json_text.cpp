// Fuzz target: the one JSON reader every file goes through (scenarios/json_text): bounded nesting, number range,
// repeated keys, syntax errors, all as ScenarioError.
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dtsim::fuzz::expect_clean<dtsim::ScenarioError>(
      [&] { (void)dtsim::parse_json_text(dtsim::fuzz::text_of(data, size)); });
  return 0;
}
