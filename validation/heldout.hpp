// The held-out errors (models/heldout_errors.hpp) of a validation of the published test split: the training runs'
// throughput errors overall, by device and over the parts no fit saw, and the collectives' bus-bandwidth errors.
#pragma once

#include <string>

#include "models/heldout_errors.hpp"
#include "validation/published.hpp"
#include "validation/published_collectives.hpp"

namespace dtsim {

// `training` and `collectives` as predict_published and predict_collectives return them for the test split (throws
// std::invalid_argument for another split); `mapping` tells which devices' efficiencies were pooled.
HeldoutErrors heldout_errors(const PublishedResult& training, const CollectiveValidation& collectives,
                             const PublishedMapping& mapping, const std::string& generated_by);

}  // namespace dtsim
