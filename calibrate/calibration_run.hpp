// `dtsim calibrate`: every microbenchmark, the fits, and the calibration document (JSON) with the machine, the date,
// the tool versions, the raw samples, the fits and their residuals.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace dtsim {

struct CalibrateOptions {
  bool quick = false;                                // about 20 s instead of about 2 minutes
  bool measure_network = true;                       // MPI ping-pong through mpirun
  std::string network_csv;                           // instead: (bytes, seconds) samples measured elsewhere
  std::string pingpong_binary;                       // the dtsim-mpi-pingpong program
  std::function<void(const std::string&)> progress;  // called with a short line before each benchmark
};

// Throws CalibrationInputError (bad CSV, no mpirun) and FitError (samples that do not fit).
nlohmann::json run_calibration(const CalibrateOptions& options);

}  // namespace dtsim
