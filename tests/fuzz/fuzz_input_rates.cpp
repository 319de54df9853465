// Fuzz target: the input pipelines' fitted rates validate --published reads (validation/published/input-rates.json).
#include "scenarios/input_rates_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dtsim::fuzz::expect_clean<dtsim::ScenarioError>([&] {
    const nlohmann::json document = dtsim::parse_json_text(dtsim::fuzz::text_of(data, size));
    (void)dtsim::parse_input_rates(document);
  });
  return 0;
}
