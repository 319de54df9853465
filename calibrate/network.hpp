// Network samples: MPI ping-pong between two processes started through mpirun, or (bytes, seconds) pairs measured
// elsewhere (osu_latency, nccl-tests, the user's runs) read from a CSV file.
#pragma once

#include <string>
#include <vector>

#include "calibrate/fit.hpp"

namespace dtsim {

// Bad input for a calibration (a CSV line, a missing mpirun): one line, naming the file or the tool.
struct CalibrationInputError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Runs `mpirun -np 2 PINGPONG REPETITIONS SIZES...` (as root it sets OpenMPI's allow-run-as-root variables) under a
// time limit and returns (bytes, one-way seconds) per size. Throws CalibrationInputError when mpirun is missing
// (naming the Debian package) and std::runtime_error when the run fails.
// `mode`: one of dtsim-mpi-pingpong's modes (e.g. "msgrate", whose sizes are message counts), or empty.
std::vector<Sample> run_mpi_pingpong(const std::string& pingpong_binary, const std::vector<long>& sizes,
                                     int repetitions, int timeout_s, const std::string& mode = "");

// "bytes,seconds" per line; a header line and blank lines are skipped. Errors name the file and line.
std::vector<Sample> read_samples_csv(const std::string& path);

// The sizes 1 B, 2 B, 4 B, ... up to max_bytes, with the midpoints of each doubling above 1 KB.
std::vector<long> pingpong_sizes(long max_bytes);

// Message-size ranges the network is fitted over (SMPI-like): small, medium, large.
inline const std::vector<double> network_breakpoints{0, 8192, 262144};

}  // namespace dtsim
