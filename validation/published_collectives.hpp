// dtsim's predictions of the published collective measurements (validation/published/collectives.csv): each row's
// system mapped to a cluster file (validation/published/collective-clusters.csv), its collective run as the
// cluster's library runs it (the tuner's protocol, one ring per NIC across nodes: sim/library_cost.hpp) on the flow
// executor, and its bus bandwidth compared with what was measured.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/collective_library.hpp"
#include "scenarios/collective_table.hpp"
#include "validation/published.hpp"

namespace dtsim {

struct CollectiveCase {
  CollectiveMeasurement row;
  std::string cluster;       // the cluster file it was predicted on
  std::string not_modelled;  // why not, when it is not
  std::string algorithm;     // dtsim's algorithm
  Protocol protocol = Protocol::none;
  int channels = 1;
  double measured_busbw_GBps = 0;  // the row's, or from its time
  double measured_time_us = 0;     // the row's, or from its bandwidth
  double predicted_busbw_GBps = 0;
  double predicted_time_us = 0;
  double launch_us = 0;           // the cluster's launch cost (part of predicted_time_us)
  double net_latency_factor = 1;  // the cluster's library.net_latency_factor
  double error = 0;               // predicted / measured bus bandwidth - 1
};

struct CollectiveValidation {
  std::vector<CollectiveCase> cases;
  ErrorStats overall;
  std::vector<std::pair<std::string, ErrorStats>> by_band;    // < 8 KiB, 8 KiB to 1 MiB, >= 1 MiB
  std::vector<std::pair<std::string, ErrorStats>> by_system;  // by cluster file
  // By cluster file: the launch cost its fit rows of at most 64 KiB imply, the median of (measured - predicted
  // without the launch) time; only rows of the fit split count.
  std::vector<std::pair<std::string, double>> implied_launch_us;
  // By cluster file: the library.net_latency_factor its multi-node allreduce fit rows up to 64 MiB imply (where the
  // network's latencies weigh): per row, the factor at which the prediction would meet the measurement, found from the
  // row predicted at the file's factor and at one more (the time is linear in it); the median, in [0.1, 100], and the
  // number of rows. Only rows of the fit split count.
  struct ImpliedFactor {
    std::string cluster;
    double factor = 1;
    int rows = 0;
  };
  std::vector<ImpliedFactor> implied_net_latency_factor;
};

// Predicts every row whose split is `split` ("fit", "test" or "all"); data_dir holds validation/ and scenarios/.
CollectiveValidation predict_collectives(const std::vector<CollectiveMeasurement>& rows, const std::string& split,
                                         const std::string& data_dir);

}  // namespace dtsim
