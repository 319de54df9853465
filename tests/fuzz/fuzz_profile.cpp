// Fuzz target: profiles (`dtsim import-profile FILE`, `predict --profile FILE`, a scenario's "profile"): the bytes as
// a torch.profiler trace (where they are JSON) and as a CSV of layer times.
#include <sstream>

#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"
#include "scenarios/profile_file.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = dtsim::fuzz::text_of(data, size);
  dtsim::fuzz::expect_clean<dtsim::ScenarioError>([&] {
    const nlohmann::json document = dtsim::parse_json_text(text);
    (void)dtsim::read_profile_trace(document, "fuzz.json");
  });
  dtsim::fuzz::expect_clean<dtsim::ScenarioError>([&] {
    std::istringstream in(text);
    (void)dtsim::read_profile_csv(in, "fuzz.csv");
  });
  return 0;
}
