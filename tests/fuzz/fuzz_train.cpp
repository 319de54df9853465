// Fuzz target: training files (`dtsim train FILE`); relative data paths resolve under tests/data.
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"
#include "scenarios/train_file.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dtsim::fuzz::expect_clean<dtsim::ScenarioError>([&] {
    const nlohmann::json document = dtsim::parse_json_text(dtsim::fuzz::text_of(data, size));
    (void)dtsim::parse_train_scenario(document, DTSIM_SOURCE_DIR "/tests/data", DTSIM_SOURCE_DIR);
  });
  return 0;
}
