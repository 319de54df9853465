// The results of `dtsim predict`, `compare` and `collective` as CSV tables (reports/csv_table.hpp): one header row,
// one row per configuration, units in the column names (_s seconds, _Bps bytes per second, _bytes or bytes). The
// columns are listed in docs/reports.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/collective_report.hpp"
#include "reports/grounding.hpp"
#include "sim/parallel.hpp"
#include "sim/predict.hpp"

namespace dtsim {

// One row per (accelerators, algorithm) of a data-parallel prediction; its columns and one row's cells (predict adds
// columns before them for its variants).
std::string predict_csv(const std::vector<Prediction>& results);
std::vector<std::string> predict_csv_columns();
// `samples` and `speedup`: the ranges predict's trust gives them (reports/grounding.hpp), empty cells without;
// `tokens_per_sample`: a language model's sequence (Model::tokens_per_sample), which fills tokens_per_s (0: empty).
std::vector<std::string> predict_csv_cells(const Prediction& p, const std::optional<ValueRange>& samples = {},
                                           const std::optional<ValueRange>& speedup = {}, int tokens_per_sample = 0);
// One row per layout of a model-parallel prediction; its columns and one row's cells.
std::string parallel_csv(const std::vector<ParallelPrediction>& results);
std::vector<std::string> parallel_csv_columns();
std::vector<std::string> parallel_csv_cells(const ParallelPrediction& p, const std::optional<ValueRange>& samples = {},
                                            int tokens_per_sample = 0);

// The columns of one collective run and its cells (`compare` adds its own columns around them).
std::vector<std::string> collective_csv_columns();
std::vector<std::string> collective_csv_cells(const CollectiveRun& run);
// `dtsim collective --csv`: the header and the run's row.
std::string collective_csv(const CollectiveRun& run);

}  // namespace dtsim
