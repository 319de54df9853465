#include "sim/scenario_step.hpp"

#include <stdexcept>

namespace dtsim {

Backend auto_step_backend(int accelerators, const ClusterSpec& cluster) {
  return cluster.library.enabled() ? Backend::flow : auto_backend(accelerators);
}

int StepResult::accelerators() const {
  if (const Prediction* p = plain()) return p->accelerators;
  return parallel()->accelerators;
}

bool StepResult::fits() const {
  if (const Prediction* p = plain()) return p->fits;
  return parallel()->fits;
}

double StepResult::step_s() const {
  if (const Prediction* p = plain()) return p->distribution.samples > 0 ? p->distribution.mean_s : p->step.step_s;
  return parallel()->step_s;
}

double StepResult::samples_per_s() const {
  if (const Prediction* p = plain()) return p->samples_per_s;
  return parallel()->samples_per_s;
}

long long StepResult::global_batch() const {
  if (const Prediction* p = plain()) return p->global_batch;
  return parallel()->global_batch;
}

double StepResult::exposed_comm_s() const {
  if (const Prediction* p = plain()) return p->step.exposed_comm_s;
  return parallel()->data_exposed_s;
}

double StepResult::comm_s() const {
  if (const Prediction* p = plain()) return p->step.comm_s;
  return parallel()->data_comm_s;
}

const std::string& StepResult::bottleneck() const {
  if (const Prediction* p = plain()) return p->bottleneck;
  return parallel()->bottleneck;
}

std::string StepResult::layout_text() const {
  if (plain() != nullptr) return "data parallel";
  return parallel()->layout.describe();
}

StepResult simulate_step(const TrainingSetup& setup, const ClusterSpec& cluster, const StepRequest& request) {
  if (request.layout) {
    if (setup.profile) {
      throw std::invalid_argument("profile " + setup.profile->source + ": a profile times the whole model on one " +
                                  "device; layouts (tensor, pipeline, ZeRO) are not predicted from it");
    }
    if (request.layout->accelerators() != request.accelerators) {
      throw std::invalid_argument("layout " + request.layout->describe() + " has " +
                                  std::to_string(request.layout->accelerators()) + " accelerators, not " +
                                  std::to_string(request.accelerators));
    }
    if (setup.variability.per_rank() || request.sampling.samples > 0) {
      throw std::invalid_argument("jitter, slow nodes and sampling: data-parallel steps only, so far (not " +
                                  request.layout->describe() + ")");
    }
    return StepResult(predict_parallel(setup, cluster, *request.layout, request.algorithm, request.record_pipeline));
  }
  const Backend backend = request.backend.value_or(auto_step_backend(request.accelerators, cluster));
  return StepResult(predict_step(setup, cluster, request.accelerators, request.algorithm, request.trace, backend,
                                 std::nullopt, request.rank_classes, request.sampling,
                                 request.progress ? &request.progress : nullptr));
}

LastBucket last_bucket_alone(const TrainingSetup& setup, const ClusterSpec& cluster, const StepRequest& request,
                             const StepResult& as_run) {
  if (const ParallelPrediction* p = as_run.parallel()) {
    return last_bucket_alone(setup, cluster, p->layout, request.algorithm, p->simulated_stage);
  }
  return last_bucket_alone(setup, cluster, request.accelerators, request.algorithm, as_run.plain()->backend);
}

StepRequest one_replica(const StepRequest& request) {
  StepRequest one = request;
  one.trace = nullptr;
  one.record_pipeline = false;
  if (one.layout) {
    one.layout->data = one.layout->expert;  // (expert parallelism: the E replicas that hold every expert once)
    one.accelerators = one.layout->accelerators();
  } else {
    one.accelerators = 1;
    one.backend = std::nullopt;
  }
  return one;
}

}  // namespace dtsim
