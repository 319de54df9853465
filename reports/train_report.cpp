#include "reports/train_report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "reports/format.hpp"

namespace dtsim {
namespace {

std::string number(const char* format, double v) {
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

}  // namespace

double mean_staleness(const TrainReport& r) {
  double sum = 0;
  double count = 0;
  for (std::size_t s = 0; s < r.staleness_histogram.size(); ++s) {
    sum += static_cast<double>(s) * static_cast<double>(r.staleness_histogram[s]);
    count += static_cast<double>(r.staleness_histogram[s]);
  }
  return count > 0 ? sum / count : 0;
}

std::string train_text(const TrainScenario& scenario, const TrainReport& report) {
  const TrainConfig& c = scenario.config;
  std::ostringstream out;
  out << "train " << scenario.name << ": MLP";
  for (std::size_t i = 0; i < c.layers.size(); ++i)
    out << (i ? "-" : " ") << c.layers[i];
  out << " on Fashion-MNIST, " << c.workers << " workers, " << to_string(c.mode);
  if (c.mode == TrainMode::allreduce) out << " (" << c.algorithm << ")";
  if (c.mode == TrainMode::ssp) out << " (bound " << c.staleness_bound << ")";
  if (c.backup_workers > 0) out << " (" << c.backup_workers << " backup workers)";
  out << ", batch " << c.batch << ", learning rate " << c.sgd.learning_rate << ", momentum " << c.sgd.momentum
      << "\n  network: star, " << format_bits_per_s(c.network.bandwidth_Bps) << ", latency "
      << format_seconds(c.network.alpha_s) << "; compute: " << scenario.compute_source;
  if (scenario.compute_source == "model") out << " (" << scenario.device << ")";
  if (c.jitter.active()) out << ", jitter " << c.jitter.describe();
  const auto stragglers = std::count_if(c.slowdown.begin(), c.slowdown.end(), [](double s) { return s != 1; });
  if (stragglers > 0) out << ", " << stragglers << " straggler" << (stragglers > 1 ? "s" : "");
  out << "\n\n  epoch   simulated time   train loss   test accuracy\n";
  for (const EvalPoint& p : report.points) {
    std::string time = format_seconds(p.time_s);
    time.resize(std::max<std::size_t>(time.size(), 14), ' ');
    out << "  " << number("%5.2f", p.epoch) << "   " << time << "   " << number("%10.4f", p.train_loss) << "   "
        << number("%12.2f%%", 100 * p.test_accuracy) << '\n';
  }
  out << '\n';
  if (report.time_to_target_s >= 0) {
    out << "  reached " << number("%.0f%%", 100 * c.target_accuracy) << " test accuracy after "
        << format_seconds(report.time_to_target_s) << " (epoch " << number("%.2f", report.epochs_to_target) << ")\n";
  } else {
    out << "  did not reach " << number("%.0f%%", 100 * c.target_accuracy) << " test accuracy\n";
  }
  out << "  " << report.updates << " updates; staleness: mean " << number("%.2f", mean_staleness(report))
      << " versions, histogram";
  for (std::size_t s = 0; s < report.staleness_histogram.size(); ++s) {
    if (report.staleness_histogram[s] > 0) out << ' ' << s << ':' << report.staleness_histogram[s];
  }
  if (c.backup_workers > 0) out << "; " << report.dropped_gradients << " late gradients dropped";
  out << "\n  simulation took " << format_seconds(report.wall_s) << " wall\n";
  return out.str();
}

nlohmann::json train_json(const TrainScenario& scenario, const TrainReport& report) {
  const TrainConfig& c = scenario.config;
  nlohmann::json points = nlohmann::json::array();
  for (const EvalPoint& p : report.points) {
    points.push_back(
        {{"epoch", p.epoch}, {"time_s", p.time_s}, {"train_loss", p.train_loss}, {"test_accuracy", p.test_accuracy}});
  }
  return nlohmann::json{{"name", scenario.name},
                        {"workers", c.workers},
                        {"mode", to_string(c.mode)},
                        {"algorithm", c.mode == TrainMode::allreduce ? c.algorithm : std::string()},
                        {"batch", c.batch},
                        {"layers", c.layers},
                        {"points", points},
                        {"target_accuracy", c.target_accuracy},
                        {"time_to_target_s", report.time_to_target_s},
                        {"epochs_to_target", report.epochs_to_target},
                        {"updates", report.updates},
                        {"staleness_histogram", report.staleness_histogram},
                        {"mean_staleness", mean_staleness(report)},
                        {"backup_workers", c.backup_workers},
                        {"dropped_gradients", report.dropped_gradients},
                        {"jitter", {{"distribution", to_string(c.jitter.distribution)}, {"sigma", c.jitter.sigma}}},
                        {"sim_wall_s", report.wall_s}};
}

std::string train_csv(const TrainReport& report) {
  std::string out = "epoch,time_s,train_loss,test_accuracy\n";
  for (const EvalPoint& p : report.points) {
    out += number("%.6g", p.epoch) + "," + number("%.9g", p.time_s) + "," + number("%.9g", p.train_loss) + "," +
           number("%.6g", p.test_accuracy) + "\n";
  }
  return out;
}

}  // namespace dtsim
