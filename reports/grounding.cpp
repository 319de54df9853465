#include "reports/grounding.hpp"

#include <algorithm>

#include "reports/format.hpp"

namespace dtsim {

const char* device_figures(const Device& device) {
  if (device.origin == "calibration") return "measured";
  if (!device.fit) return "datasheet";
  return device.fit->pooled ? "pooled" : "fitted";
}

std::string grounding_text(const Device& device) {
  const std::string kind = device_figures(device);
  if (kind == "measured") return "compute measured on this machine by dtsim calibrate (" + device.source + ")";
  if (kind == "datasheet") {
    return device.name +
           ": datasheet peaks and efficiencies fitted to no measurement: an estimate, not a calibrated prediction";
  }
  const DeviceFit& f = *device.fit;
  if (kind == "pooled") {
    return device.name + ": no published measurement of this part was fitted; its efficiencies are pooled from " +
           std::to_string(f.rows) + " measurements of other GPUs (median error " + format_percent(f.median_error) +
           " on them): expect larger errors than on a fitted part";
  }
  return device.name + ": efficiencies fitted to " + std::to_string(f.rows) +
         " published measurements of this part (median error " + format_percent(f.median_error) + " on them)";
}

nlohmann::json grounding_json(const Device& device) {
  nlohmann::json j{{"device_figures", device_figures(device)}};
  if (device.fit) {
    j["fit_rows"] = device.fit->rows;
    j["fit_median_error"] = device.fit->median_error;
    j["fitted_by"] = device.fit->by;
  }
  return j;
}

std::string grounding_text(const TrainingSetup& setup) {
  if (!setup.profile) return grounding_text(setup.device);
  const MeasuredProfile& p = *setup.profile;
  return "compute measured: each layer's forward and backward time from the profile " + p.source + " (batch " +
         std::to_string(p.batch) + ", median of " + std::to_string(p.steps) + (p.steps == 1 ? " step" : " steps") +
         "); " + setup.device.name + "'s figures serve its memory only";
}

nlohmann::json grounding_json(const TrainingSetup& setup) {
  if (!setup.profile) return grounding_json(setup.device);
  return nlohmann::json{{"device_figures", "profile"},
                        {"profile", setup.profile->source},
                        {"profile_batch", setup.profile->batch},
                        {"profile_steps", setup.profile->steps}};
}

nlohmann::json error_band_json(const ErrorBand& b) {
  return nlohmann::json{{"rows", b.rows},
                        {"median_abs_error", b.median_abs_error},
                        {"p10_error", b.p10_error},
                        {"p90_error", b.p90_error},
                        {"min_devices", b.min_devices},
                        {"max_devices", b.max_devices},
                        {"measured_over_predicted", {b.low(1.0), b.high(1.0)}},
                        {"models", b.models}};
}

namespace {

// The band for the setup's device, before what its model adds (trust_band).
std::optional<TrustBand> device_trust_band(const TrainingSetup& setup, const HeldoutErrors& heldout) {
  if (setup.profile) return std::nullopt;
  const Device& device = setup.device;
  const std::string kind = device_figures(device);
  if (kind == "measured" || heldout.training.rows == 0) return std::nullopt;
  const std::string all = "published runs (all parts) that no fit saw";
  if (kind == "datasheet") {
    return TrustBand{heldout.training, all,
                     device.name + " is datasheet figures fitted to nothing: expect larger errors than fitted parts'"};
  }
  if (kind == "pooled") {
    if (heldout.pooled_devices.rows >= heldout_min_device_rows) {
      return TrustBand{
          heldout.pooled_devices,
          "published runs that no fit saw, of parts whose efficiencies were pooled as " + device.name + "'s are", ""};
    }
    return TrustBand{heldout.training, all,
                     device.name +
                         "'s efficiencies are pooled from other parts: expect larger errors than fitted "
                         "parts' (" +
                         std::to_string(heldout.pooled_devices.rows) + " held-out runs of pooled parts)"};
  }
  if (const ErrorBand* own = heldout.device(device.name, heldout_min_device_rows)) {
    return TrustBand{*own, "published runs of " + device.name + " that no fit saw", ""};
  }
  int own_rows = 0;
  for (const auto& [name, band] : heldout.by_device)
    if (name == device.name) own_rows = band.rows;
  return TrustBand{heldout.training, all,
                   own_rows == 0 ? "none of them is of " + device.name
                                 : "only " + std::to_string(own_rows) + " of them " + (own_rows == 1 ? "is" : "are") +
                                       " of " + device.name};
}

}  // namespace

std::optional<TrustBand> trust_band(const TrainingSetup& setup, const HeldoutErrors& heldout) {
  std::optional<TrustBand> t = device_trust_band(setup, heldout);
  if (!t || t->band.models.empty()) return t;
  const std::vector<std::string>& models = t->band.models;
  if (std::find(models.begin(), models.end(), setup.model.name) == models.end()) {
    std::string trained;
    for (const std::string& m : models)
      trained += (trained.empty() ? "" : ", ") + m;
    t->caveat += (t->caveat.empty() ? "" : "; ") + std::string("none of them trains ") + setup.model.name +
                 " (they train " + trained + ")";
  }
  return t;
}

namespace {

std::string multiple(double value) { return format_fixed(value, 2) + "x"; }

}  // namespace

std::string trust_text(const TrainingSetup& setup, const HeldoutErrors* heldout, int largest_accelerators) {
  if (heldout == nullptr) {
    return "not available: no held-out errors were found (dtsim validate --published --write-heldout FILE writes "
           "them; the shipped file is validation/published/heldout.json)";
  }
  if (setup.profile) {
    return "compute comes from the measured profile; docs/validation.md's PyTorch validation checks predictions made "
           "from such profiles";
  }
  const std::optional<TrustBand> t = trust_band(setup, *heldout);
  if (!t) return "compute was measured on this machine by dtsim calibrate; no published run checks it";
  const ErrorBand& b = t->band;
  std::string text = "80% of the " + std::to_string(b.rows) + " " + t->basis + " (" + std::to_string(b.min_devices) +
                     " to " + std::to_string(b.max_devices) + " devices) measured " + multiple(b.low(1.0)) + " to " +
                     multiple(b.high(1.0)) + " the throughput dtsim predicted (median |error| " +
                     format_percent(b.median_abs_error) + ")";
  if (!t->caveat.empty()) text += "; " + t->caveat;
  if (const ErrorBand& s = heldout->speedup; largest_accelerators > 1 && s.rows > 0) {
    text += "; speedup: 80% of the " + std::to_string(s.rows) +
            " held-out pairs of runs of one configuration (all parts, " + std::to_string(s.min_devices) + " to " +
            std::to_string(s.max_devices) + " devices against one) measured " + multiple(s.low(1.0)) + " to " +
            multiple(s.high(1.0)) + " the speedup dtsim predicted (median |error| " +
            format_percent(s.median_abs_error) + ")";
  }
  if (largest_accelerators > b.max_devices && heldout->collectives.rows > 0) {
    const ErrorBand& c = heldout->collectives;
    text += "; above " + std::to_string(b.max_devices) +
            " devices only the network is checked, against published collectives (80% of " + std::to_string(c.rows) +
            " held-out nccl-tests and rccl-tests runs measured " + multiple(c.low(1.0)) + " to " +
            multiple(c.high(1.0)) + " dtsim's bus bandwidth)";
  }
  return text;
}

nlohmann::json trust_json(const TrainingSetup& setup, const HeldoutErrors* heldout) {
  if (heldout == nullptr) return nullptr;
  const std::optional<TrustBand> t = trust_band(setup, *heldout);
  if (!t) return nullptr;
  nlohmann::json j = error_band_json(t->band);
  j["basis"] = t->basis;
  j["caveat"] = t->caveat;
  j["speedup"] = error_band_json(heldout->speedup);
  j["source"] = heldout->generated_by;
  return j;
}

std::optional<ValueRange> speedup_range(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted,
                                        int accelerators) {
  if (heldout == nullptr || accelerators <= 1 || heldout->speedup.rows == 0 || !trust_band(setup, *heldout)) {
    return std::nullopt;
  }
  // (no more than linear: the same work per accelerator cannot go more than N times as fast on N)
  const auto most = static_cast<double>(accelerators);
  return ValueRange{std::min(heldout->speedup.low(predicted), most), std::min(heldout->speedup.high(predicted), most)};
}

std::optional<ValueRange> throughput_range(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted) {
  if (heldout == nullptr) return std::nullopt;
  const std::optional<TrustBand> t = trust_band(setup, *heldout);
  if (!t) return std::nullopt;
  return ValueRange{t->band.low(predicted), t->band.high(predicted)};
}

namespace {

nlohmann::json range_json(const std::optional<ValueRange>& range) {
  if (!range) return nullptr;
  return nlohmann::json::array({range->first, range->second});
}

}  // namespace

nlohmann::json speedup_range_json(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted,
                                  int accelerators) {
  return range_json(speedup_range(setup, heldout, predicted, accelerators));
}

nlohmann::json throughput_range_json(const TrainingSetup& setup, const HeldoutErrors* heldout, double predicted) {
  return range_json(throughput_range(setup, heldout, predicted));
}

std::string plain_messages_note(const ClusterSpec& cluster) {
  if (!cluster.library.name.empty() || cluster.node.nics < 2) return "";
  return "plain messages (the cluster names no collective library): a ring or a tree crosses each node boundary "
         "through one of the " +
         std::to_string(cluster.node.nics) +
         " NICs (algorithms whose every rank sends across nodes use them all), where NCCL spreads a call over channels "
         "on all of them, in its protocols; --library nccl runs it so (or \"library\" in the cluster file; "
         "docs/clusters.md)";
}

}  // namespace dtsim
