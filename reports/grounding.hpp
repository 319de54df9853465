// How grounded a prediction's compute is: whether the device's efficiency parameters were fitted to published
// measurements of that device (and how well), pooled from other devices' fits, measured on this machine, or datasheet
// peaks with default efficiencies. predict and explain print it with every prediction.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "models/cluster.hpp"
#include "models/devices.hpp"
#include "models/heldout_errors.hpp"
#include "models/training.hpp"

namespace dtsim {

// "fitted", "pooled", "measured" or "datasheet".
const char* device_figures(const Device& device);
// One sentence for text reports.
std::string grounding_text(const Device& device);
// {"device_figures": ..., "fit_rows": ..., "fit_median_error": ..., "fitted_by": ...} (fit fields when fitted).
nlohmann::json grounding_json(const Device& device);
// The setup's: its measured profile's where it has one (device figures then serve only its memory), else its device's.
std::string grounding_text(const TrainingSetup& setup);
nlohmann::json grounding_json(const TrainingSetup& setup);

// How far to trust a predicted throughput: the band of held-out errors (models/heldout_errors.hpp) that applies to the
// setup's compute, what it was taken over, and what it leaves out. None where the compute was measured (a profile,
// or a calibration of this machine): their checks are the framework and MPI validations.
struct TrustBand {
  ErrorBand band;
  std::string basis;   // e.g. "published runs of v100-sxm2-32gb"
  std::string caveat;  // "" or why the errors may be larger than the band's
};
// {"rows", "median_abs_error", "p10_error", "p90_error", "min_devices", "max_devices", "measured_over_predicted":
// [low, high] (the multiples of a prediction that 80% of the rows measured)}.
nlohmann::json error_band_json(const ErrorBand& band);
std::optional<TrustBand> trust_band(const TrainingSetup& setup, const HeldoutErrors& heldout);
// One sentence (without the leading "trust: "): the band as multiples of the prediction, and, when
// `largest_accelerators` exceeds the largest held-out run, what checks the network at that scale. `heldout` nullptr:
// says they are missing.
std::string trust_text(const TrainingSetup& setup, const HeldoutErrors* heldout, int largest_accelerators);
// {"basis", "rows", "median_abs_error", "p10_error", "p90_error", "min_devices", "max_devices", "caveat",
// "measured_over_predicted": [low, high], "speedup": the speedup band's fields, "source"}; null without a band.
nlohmann::json trust_json(const TrainingSetup& setup, const HeldoutErrors* heldout);
// A range of values a prediction stands for: low, high.
using ValueRange = std::pair<double, double>;
// What 80% of the held-out runs would have measured for a predicted throughput under the setup's band; nothing
// without one (as throughput_range_json).
std::optional<ValueRange> throughput_range(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted);
// The same for a predicted speedup on `accelerators` (as speedup_range_json).
std::optional<ValueRange> speedup_range(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted,
                                        int accelerators);
// [low, high] of a predicted speedup on `accelerators` under the held-out speedup band (where the setup has a
// compute band at all), neither above `accelerators`; null for one accelerator or without a band.
nlohmann::json speedup_range_json(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted,
                                  int accelerators);
// [low, high] of a predicted throughput under the setup's band; null without one.
nlohmann::json throughput_range_json(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted);

// A cluster of several NICs a node that names no collective library: what its plain messages leave out, and how to
// name one (empty for any other cluster). Plain messages cross each node boundary of a ring or a tree through one NIC,
// where NCCL runs a call in channels over all of them: a buyer comparing one NIC with eight would see no difference.
std::string plain_messages_note(const ClusterSpec& cluster);

}  // namespace dtsim
