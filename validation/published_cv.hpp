// Cross-validation of the published fit on the fit split alone: how well `dtsim calibrate --published` predicts fit
// rows it did not see, so that a change to the compute model or to the fit is decided without the test split.
//
// The fit rows fall into K folds by a hash of their id (FNV-1a, 64 bits, modulo K), row by row as the fit/test split
// itself was made (validation/published/README.md). For each fold the fit runs on the other folds' rows (the same
// fit_published, the same options) and predicts the fold's rows; every fit row is predicted once, by a fit that did
// not see it.
#pragma once

#include <string>
#include <vector>

#include "validation/published_fit.hpp"

namespace dtsim {

struct CrossValidation {
  int folds = 0;
  PublishedResult out_of_fold;  // each predicted fit row, by the fit without its fold, and their errors
};

// The fold of a row id among `folds` (FNV-1a of the id, modulo folds).
int published_fold(const std::string& id, int folds);

// Cross-validates the fit on the rows whose split is "fit"; `folds` >= 2. Throws std::invalid_argument when a fold
// leaves nothing to fit.
CrossValidation cross_validate_published(const std::vector<PublishedRow>& rows, const std::vector<std::string>& devices,
                                         const PublishedMapping& mapping, const std::string& data_dir,
                                         const PublishedFitOptions& options, int folds);

}  // namespace dtsim
