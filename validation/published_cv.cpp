#include "validation/published_cv.hpp"

#include <cstdint>
#include <stdexcept>

namespace dtsim {

int published_fold(const std::string& id, int folds) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a offset basis and prime
  for (const unsigned char c : id) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return static_cast<int>(hash % static_cast<std::uint64_t>(folds));
}

CrossValidation cross_validate_published(const std::vector<PublishedRow>& rows, const std::vector<std::string>& devices,
                                         const PublishedMapping& mapping, const std::string& data_dir,
                                         const PublishedFitOptions& options, int folds) {
  if (folds < 2) throw std::invalid_argument("cross-validation needs at least 2 folds, got " + std::to_string(folds));
  CrossValidation cv;
  cv.folds = folds;
  for (int fold = 0; fold < folds; ++fold) {
    // the fold's rows leave the fit ("held"), every other fit row stays; test rows stay out of both
    std::vector<PublishedRow> split = rows;
    bool held_any = false;
    for (PublishedRow& row : split) {
      if (row.split == "fit" && published_fold(row.id, folds) == fold) {
        row.split = "held";
        held_any = true;
      }
    }
    if (!held_any) continue;
    const PublishedFit fit = fit_published(split, devices, mapping, data_dir, options);
    PublishedMapping fitted = mapping;
    fitted.decode_per_core = fit.input.decode_per_core;
    fitted.decode_per_core_autoaugment = fit.input.decode_per_core_autoaugment;
    fitted.device_of = [&](const std::string& name) {
      Device d = mapping.device_of(name);
      const auto it = fit.devices.find(name);
      apply_fit(d, it == fit.devices.end() ? fit.pooled : it->second.params, fit.t_half_s, fit.grouped_half_channels,
                fit.rates);
      return d;
    };
    for (PublishedCase c : predict_published(split, "held", fitted, data_dir).cases) {
      if (c.device.empty()) continue;
      c.row.split = "fit";
      cv.out_of_fold.cases.push_back(std::move(c));
    }
  }
  summarize_published(cv.out_of_fold);
  return cv;
}

}  // namespace dtsim
