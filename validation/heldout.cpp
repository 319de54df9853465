#include "validation/heldout.hpp"

#include <map>
#include <stdexcept>
#include <tuple>

namespace dtsim {
namespace {

struct Rows {
  std::vector<double> errors;
  std::vector<int> devices;
  std::vector<std::string> models;  // (training rows only)
  void add(double error, int device_count, const std::string& model = "") {
    errors.push_back(error);
    devices.push_back(device_count);
    if (!model.empty()) models.push_back(model);
  }
  ErrorBand band() const { return error_band(errors, devices, models); }
};

}  // namespace

HeldoutErrors heldout_errors(const PublishedResult& training, const CollectiveValidation& collectives,
                             const PublishedMapping& mapping, const std::string& generated_by) {
  HeldoutErrors out;
  out.generated_by = generated_by;
  Rows all, pooled;
  std::map<std::string, Rows> by_device;
  std::map<std::string, bool> is_pooled;
  for (const PublishedCase& c : training.cases) {
    if (c.row.split != "test") {
      throw std::invalid_argument("held-out errors: row " + c.row.id + " is in the " + c.row.split +
                                  " split, not the test split");
    }
    if (!c.not_modelled.empty() || c.device.empty()) continue;
    all.add(c.error, c.row.device_count, c.model);
    by_device[c.device].add(c.error, c.row.device_count, c.model);
    auto [at, added] = is_pooled.try_emplace(c.device, false);
    if (added) {
      const Device d = mapping.device_of(c.device);
      at->second = d.fit && d.fit->pooled;
    }
    if (at->second) pooled.add(c.error, c.row.device_count, c.model);
  }
  out.training = all.band();
  for (const auto& [name, rows] : by_device)
    out.by_device.emplace_back(name, rows.band());
  out.pooled_devices = pooled.band();
  // speedups: a multi-device run against the one-device run of the same configuration and source
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, int, int, std::string,
                         std::string, std::string>;
  std::map<Key, std::vector<const PublishedCase*>> configurations;
  for (const PublishedCase& c : training.cases) {
    if (!c.not_modelled.empty() || c.device.empty()) continue;
    const PublishedRow& r = c.row;
    configurations[Key{r.device, r.framework, r.software_version, r.model, r.precision, r.batch_per_device,
                       r.sequence_length, r.source_url, r.throughput_unit, r.memory_format}]
        .push_back(&c);
  }
  Rows speedups;
  for (const auto& [key, cases] : configurations) {
    const PublishedCase* one = nullptr;
    int ones = 0;
    for (const PublishedCase* c : cases) {
      if (c->row.device_count == 1) {
        one = c;
        ++ones;
      }
    }
    if (ones != 1 || one->predicted <= 0) continue;  // (none to compare with, or two that disagree)
    for (const PublishedCase* c : cases) {
      if (c->row.device_count == 1) continue;
      const double predicted = c->predicted / one->predicted;
      const double measured = c->row.throughput / one->row.throughput;
      speedups.add(predicted / measured - 1, c->row.device_count, c->model);
    }
  }
  out.speedup = speedups.band();
  Rows coll;
  std::map<std::string, Rows> coll_by_size;
  for (const CollectiveCase& c : collectives.cases) {
    if (c.row.split != "test") {
      throw std::invalid_argument("held-out errors: collective row " + c.row.id + " is in the " + c.row.split +
                                  " split, not the test split");
    }
    if (!c.not_modelled.empty()) continue;
    coll.add(c.error, c.row.gpus);
    coll_by_size[collective_size_class(c.row.size_bytes)].add(c.error, c.row.gpus);
  }
  out.collectives = coll.band();
  for (const auto& [size, rows] : coll_by_size)
    out.collectives_by_size.emplace_back(size, rows.band());
  return out;
}

}  // namespace dtsim
