#include "algorithms/options.hpp"

namespace dtsim {

std::uint64_t AlgorithmOptions::number(const OptionSpec& spec) const {
  const auto it = values_.find(spec.name);
  if (it == values_.end()) return spec.default_number;
  if (const auto* value = std::get_if<std::uint64_t>(&it->second)) return *value;
  throw std::logic_error("algorithm option '" + std::string(spec.name) + "' was set as a word, not a number");
}

std::string AlgorithmOptions::text(const OptionSpec& spec) const {
  const auto it = values_.find(spec.name);
  if (it == values_.end()) return std::string(spec.default_text);
  if (const auto* value = std::get_if<std::string>(&it->second)) return *value;
  throw std::logic_error("algorithm option '" + std::string(spec.name) + "' was set as a number, not a word");
}

std::vector<std::string> AlgorithmOptions::names() const {
  std::vector<std::string> out;
  for (const auto& entry : values_)
    out.push_back(entry.first);
  return out;
}

}  // namespace dtsim
