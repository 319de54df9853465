// The results of `dtsim predict`, `compare` and `collective` as CSV tables (reports/csv_table.hpp): one header row,
// one row per configuration, units in the column names (_s seconds, _Bps bytes per second, _bytes or bytes). The
// columns are listed in docs/reports.md.
#pragma once

#include <string>
#include <vector>

#include "reports/collective_report.hpp"
#include "sim/parallel.hpp"
#include "sim/predict.hpp"

namespace dtsim {

// One row per (accelerators, algorithm) of a data-parallel prediction.
std::string predict_csv(const std::vector<Prediction>& results);
// One row per layout of a model-parallel prediction.
std::string parallel_csv(const std::vector<ParallelPrediction>& results);

// The columns of one collective run and its cells (`compare` adds its own columns around them).
std::vector<std::string> collective_csv_columns();
std::vector<std::string> collective_csv_cells(const CollectiveRun& run);
// `dtsim collective --csv`: the header and the run's row.
std::string collective_csv(const CollectiveRun& run);

}  // namespace dtsim
