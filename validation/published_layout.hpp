// The published rows that name a parallel layout (torchtitan's and pytorch/ao's Llama runs: FSDP, tensor and pipeline
// parallelism, per-op selective recomputation, torch.compile), predicted by `predict_parallel` as `dtsim predict`
// predicts a scenario's "parallel" layout, in tokens per second per device.
#pragma once

#include <string>

#include "models/cluster.hpp"
#include "models/training.hpp"
#include "scenarios/published_file.hpp"

namespace dtsim {

// Why a row's layout or settings cannot be predicted ("" when they can): context parallelism, hybrid sharding,
// asynchronous tensor parallelism, the interleaved pipeline, layer-selective checkpointing of an unstated frequency,
// float8 with rowwise or MX scales, or a setting the source does not state.
std::string layout_not_modelled(const PublishedRow& row);

struct LayoutPrediction {
  double tokens_per_device_s = 0;
  bool fits = true;  // dtsim's memory model: the most loaded stage within the device's memory
};

// `setup` carries the row's model, device (its memory as the device file gives it) and precision; the rest comes from
// the row. Throws std::invalid_argument for a layout the cluster cannot take.
LayoutPrediction predict_layout_row(const PublishedRow& row, TrainingSetup setup, const ClusterSpec& cluster);

}  // namespace dtsim
