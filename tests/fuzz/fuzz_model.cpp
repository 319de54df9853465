// Fuzz target: model files (`"model": "FILE"` in a scenario, `--model FILE`): transformers by hyperparameters and
// layer lists, generated into layers.
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"
#include "scenarios/model_file.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dtsim::fuzz::expect_clean<dtsim::ScenarioError>([&] {
    const nlohmann::json document = dtsim::parse_json_text(dtsim::fuzz::text_of(data, size));
    (void)dtsim::parse_model_document(document);
  });
  return 0;
}
