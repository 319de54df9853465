// Results of `dtsim train`: per evaluation point the epoch, simulated time, training loss and test accuracy; the
// time to the target accuracy; the staleness histogram. Text, JSON and CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "scenarios/train_file.hpp"
#include "sim/sgd_training.hpp"

namespace dtsim {

std::string train_text(const TrainScenario& scenario, const TrainReport& report);
nlohmann::json train_json(const TrainScenario& scenario, const TrainReport& report);
// How many versions old the applied gradients were, on average (0 when none was stale or none was applied).
double mean_staleness(const TrainReport& report);
// One row per evaluation point: epoch,time_s,train_loss,test_accuracy.
std::string train_csv(const TrainReport& report);

}  // namespace dtsim
