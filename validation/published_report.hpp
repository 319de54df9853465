// The published validation as text (per device, per model, overall, the worst rows, what is not modelled) and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "validation/published.hpp"

namespace dtsim {

std::string published_text(const PublishedResult& result, const std::string& split);
nlohmann::json published_json(const PublishedResult& result, const std::string& split);

}  // namespace dtsim
