// The published validations as text and JSON: training runs (per device, per model, overall, the worst rows, what is
// not modelled) and collectives.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "validation/published.hpp"
#include "validation/published_collectives.hpp"

namespace dtsim {

// "median |error| 11.8%, p90 32.2% over 111 rows", and the same as {rows, median_abs_error, p90_abs_error}.
std::string stats_line(const ErrorStats& s);
nlohmann::json stats_json(const ErrorStats& s);

std::string published_text(const PublishedResult& result, const std::string& split);
nlohmann::json published_json(const PublishedResult& result, const std::string& split);

// The published collectives' validation: by size band, by cluster, every row (validation/published_collectives.hpp).
std::string collectives_text(const CollectiveValidation& result, const std::string& split);
nlohmann::json collectives_json(const CollectiveValidation& result, const std::string& split);

}  // namespace dtsim
