// Fuzz target: result files given to `dtsim report` (predict, compare, train and validate JSON), read and rendered:
// the charts must take whatever numbers a file holds that the reader accepted.
#include "reports/html_report.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json document;
  try {
    document = dtsim::parse_json_text(dtsim::fuzz::text_of(data, size));
  } catch (const dtsim::ScenarioError&) {
    return 0;
  }
  dtsim::fuzz::expect_clean<dtsim::ResultFileError>([&] {
    dtsim::ReportContent content;
    dtsim::add_result(document, "fuzz.json", content);
    (void)dtsim::render_report_html(content);
  });
  return 0;
}
