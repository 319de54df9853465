// Parameter sweeps of `dtsim compare` and `dtsim predict`: in one process, or as an MPI job
// (`mpirun -n K dtsim compare ...`) whose rank k runs configurations k, k + K, k + 2K, ... and whose rank 0 gathers
// every result and prints the same report a single process would. With `--resume FILE` each finished configuration
// is appended to FILE as one JSON line the moment it is done; running the same command again skips what FILE holds,
// so an interrupted sweep resumes where it stopped.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/collective_report.hpp"
#include "reports/progress.hpp"
#include "sim/predict.hpp"

namespace dtsim::cli {

class Sweep {
public:
  // `journal`: the --resume file ("" for none). `signature`: what identifies the sweep (the command and its flags
  // but --resume); a journal written by another sweep is refused.
  Sweep(std::string journal, std::string signature);
  ~Sweep();
  Sweep(const Sweep&) = delete;
  Sweep& operator=(const Sweep&) = delete;

  bool is_root() const { return rank_ == 0; }
  int processes() const { return size_; }

  // Runs configurations 0 .. count-1 with `one` (which returns the configuration's result as a JSON record), each
  // process its share from the last (the largest: configurations are listed smallest first), and returns every
  // record in configuration order on rank 0, an empty list on the others. An exception in one configuration becomes
  // an error record that ends that process's share and is rethrown on rank 0 (as a UsageError when it was one), so
  // no rank waits forever for another that failed, and a refused largest point costs no smaller runs.
  std::vector<nlohmann::json> run(std::size_t count, const std::function<nlohmann::json(std::size_t)>& one,
                                  const std::function<std::string(std::size_t)>& describe);

private:
  std::string journal_;
  std::string signature_;
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
};

// The signature of a sweep: its command and arguments but --resume and its value.
std::string sweep_signature(const std::string& command, std::span<char* const> args);

// Records: every field the reports read, so that a gathered or resumed result prints as a fresh one (wall time and
// memory are those of the process that ran it).
nlohmann::json to_record(const CollectiveRun& run);
CollectiveRun collective_run_from_record(const nlohmann::json& record);
nlohmann::json to_record(const Prediction& prediction);
Prediction prediction_from_record(const nlohmann::json& record);
nlohmann::json to_record(const std::vector<LinkUsage>& links);
std::vector<LinkUsage> links_from_record(const nlohmann::json& record);

}  // namespace dtsim::cli
