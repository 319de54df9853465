// A target that lets one input escape on purpose ("escape..."), so that CTest shows the replay fails on an escaping
// input (fuzz-replay-catches-an-escape, expected to fail) and a check over no inputs is not mistaken for a pass.
#include <stdexcept>
#include <string>

#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = dtsim::fuzz::text_of(data, size);
  dtsim::fuzz::expect_clean<std::invalid_argument>([&] {
    if (text.starts_with("escape")) throw std::logic_error("an internal error a loader must not let out");
    throw std::invalid_argument("a clean refusal");
  });
  return 0;
}
