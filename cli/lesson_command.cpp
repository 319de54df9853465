// `dtsim lesson [-o lesson.html]`: one self-contained page that walks why scaling stops being linear, bottleneck by
// bottleneck, every number from a simulation run for it (the executors, predict's step, the real SGD kernel) and
// every claim's what-if simulated again beside it, as `dtsim explain` does. One section at a time: previous, next.
#include <array>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/schedule_rounds.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "reports/schedule_drawing.hpp"
#include "reports/svg_plot.hpp"
#include "reports/train_report.hpp"
#include "scenarios/idx_reader.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "scenarios/train_file.hpp"
#include "sim/flow_executor.hpp"
#include "sim/predict.hpp"
#include "sim/sgd_training.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 2> lesson_flags{{
    {"output", "FILE", "lesson.html", "where to write the page (also -o FILE); written atomically"},
    {"quick", "", "", "train the SGD kernel a quarter epoch instead of one (the staleness section; seconds, not tens)"},
}};

std::string html(const std::string& text) { return escape_xml(text); }

double collective_s(const char* algorithm, int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                    const AlgorithmOptions& options = {}) {
  FlowOptions o;
  o.cost = cost;
  return run_flow(find_algorithm(algorithm).build(ranks, bytes, options), o).time_s;
}

// Section 1: the ring's latency term against the tree's bandwidth term, and where they cross.
std::string bandwidth_latency(const AlphaBetaGamma& star) {
  constexpr int ranks = 16;
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = 1000; b <= 1'000'000'000; b *= 10)
    sizes.push_back(b);
  const auto crossover = [&](const AlphaBetaGamma& cost, std::vector<std::pair<double, double>>* ring,
                             std::vector<std::pair<double, double>>* tree) {
    double cross = 0;
    bool tree_ahead = false;
    for (const std::uint64_t n : sizes) {
      const double r = collective_s("ring", ranks, n, cost), t = collective_s("tree", ranks, n, cost);
      if (ring != nullptr) ring->emplace_back(static_cast<double>(n), r);
      if (tree != nullptr) tree->emplace_back(static_cast<double>(n), t);
      if (t < r) tree_ahead = true;
      if (tree_ahead && r <= t && cross == 0) cross = static_cast<double>(n);
    }
    return cross;
  };
  std::vector<std::pair<double, double>> ring, tree;
  const double cross = crossover(star, &ring, &tree);
  AlphaBetaGamma slow = star;
  slow.alpha_s *= 10;
  const double cross_slow = crossover(slow, nullptr, nullptr);
  LinePlot plot;
  plot.title = "Allreduce on 16 ranks of a star (" + format_bits_per_s(star.bandwidth_Bps) + ", " +
               format_seconds(star.alpha_s) + "): time against size";
  plot.x = PlotAxis{"bytes per rank", true, [](double v) { return format_bytes(static_cast<std::uint64_t>(v)); }, {}};
  plot.y = PlotAxis{"time", true, [](double v) { return format_seconds(v); }, {}};
  plot.series.push_back({"ring", ring, false, ""});
  plot.series.push_back({"tree (binomial)", tree, false, ""});
  std::ostringstream out;
  out << "<p>A ring allreduce sends 2(P - 1) messages of n / P bytes from every rank: its time is about 2(P - 1) "
         "alpha + 2 n / B, so its <b>latency term</b> grows with the ranks and its bandwidth term does not. A binomial "
         "tree sends 2 log2 P messages of the whole n: 2 log2 P (alpha + n / B), its <b>bandwidth term</b> grows with "
         "log2 P. Simulated here (flow executor) on 16 ranks: at "
      << format_bytes(sizes.front()) << " the ring takes " << format_seconds(ring.front().second) << " and the tree "
      << format_seconds(tree.front().second) << "; at " << format_bytes(sizes.back()) << " the ring takes "
      << format_seconds(ring.back().second) << " and the tree " << format_seconds(tree.back().second)
      << ". The ring wins from <b>"
      << (cross > 0 ? format_bytes(static_cast<std::uint64_t>(cross)) : std::string("no size here")) << "</b> up.</p>"
      << "<p class=\"whatif\">What if the latency were 10 times larger (" << format_seconds(slow.alpha_s)
      << ")? Re-simulated: the ring then wins only from "
      << (cross_slow > 0 ? format_bytes(static_cast<std::uint64_t>(cross_slow)) : std::string("no size here"))
      << ": the more a message costs, the larger the sizes where few messages beat few bytes.</p>"
      << render_line_plot(plot);
  return out.str();
}

std::string draw_small(const char* algorithm, int ranks, const std::vector<double>& values) {
  const Schedule s = find_algorithm(algorithm).build(ranks, 4, AlgorithmOptions{});
  const ScheduleRounds rounds = schedule_rounds(s);
  DrawingRequest request;
  request.title = std::string(algorithm) + " allreduce of one number per rank, " + std::to_string(ranks) + " ranks";
  request.layout = layout_for(algorithm, ranks);
  request.values = values;
  return schedule_svg(s, rounds, request);
}

// Section 2: one server's links carry every worker's gradient.
std::string incast(const AlphaBetaGamma& star) {
  constexpr int ranks = 16;
  constexpr std::uint64_t bytes = 100'000'000;
  const double ring = collective_s("ring", ranks, bytes, star);
  AlgorithmOptions one, four;
  one.set(ps_servers_option.name, std::uint64_t{1});
  four.set(ps_servers_option.name, std::uint64_t{4});
  const double ps1 = collective_s("ps", ranks, bytes, star, one), ps4 = collective_s("ps", ranks, bytes, star, four);
  std::ostringstream out;
  out << "<p>A parameter server receives every worker's gradient and sends every worker the new weights: its link "
         "carries 2 (P - 1) n bytes while a ring's carries 2 n (P - 1) / P. On 16 ranks and 100 MB, simulated: one "
         "server takes <b>"
      << format_seconds(ps1) << "</b>, the ring <b>" << format_seconds(ring) << "</b> (" << format_fixed(ps1 / ring, 1)
      << "x).</p><p class=\"whatif\">What if the gradients were sharded over 4 servers? Re-simulated: "
      << format_seconds(ps4) << " (" << format_fixed(ps1 / ps4, 1)
      << "x faster than one server): each server's link carries a quarter.</p>";
  return out.str();
}

Scenario default_scenario() {
  return load_scenario_file(std::string(DTSIM_DATA_DIR) + "/scenarios/training/resnet50-v100.json", DTSIM_DATA_DIR);
}

struct Scaled {
  double efficiency = 0;
  Prediction many;
};

Scaled scaled(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators) {
  const Prediction one = predict_step(setup, cluster, 1, "ring", nullptr, Backend::simgrid);
  Scaled out{0, predict_step(setup, cluster, accelerators, "ring", nullptr, Backend::flow)};
  compare_to_baseline(out.many, one);
  out.efficiency = out.many.efficiency;
  return out;
}

// Section 3: a small batch per accelerator leaves the allreduce less to hide behind.
std::string small_batches() {
  Scenario sc = default_scenario();
  sc.setup.input.enabled = false;
  std::ostringstream out;
  sc.setup.batch = 64;
  const Scaled big = scaled(sc.setup, sc.cluster, 64);
  sc.setup.batch = 8;
  const Scaled small = scaled(sc.setup, sc.cluster, 64);
  out << "<p>Weak scaling keeps the batch per accelerator: the allreduce of the same gradients must hide behind a "
         "backward pass that shrinks with the batch. ResNet-50 on 64 V100s (4 per node, 100 Gb/s EDR), ring: with "
      << "64 samples per GPU the scaling efficiency is <b>" << format_percent(big.efficiency) << "</b> (backward "
      << format_seconds(big.many.step.backward_s) << ", exposed communication "
      << format_seconds(big.many.step.exposed_comm_s) << "); with 8 it is <b>" << format_percent(small.efficiency)
      << "</b> (backward " << format_seconds(small.many.step.backward_s) << ", exposed "
      << format_seconds(small.many.step.exposed_comm_s) << ").</p>";
  sc.cluster.node.nic.bandwidth_Bps *= 4;
  sc.cluster.fabric.link.bandwidth_Bps *= 4;
  const Scaled faster = scaled(sc.setup, sc.cluster, 64);
  out << "<p class=\"whatif\">What if the NICs and the fabric were 4 times faster at a batch of 8? Re-simulated: "
      << format_percent(faster.efficiency) << " (exposed " << format_seconds(faster.many.step.exposed_comm_s) << ")";
  if (faster.efficiency > small.efficiency + 0.005) {
    out << ": a faster network buys back part of what the small batch lost.";
  } else {
    out << ": almost nothing changes, so the NICs and the fabric were not the limit";
    if (!faster.many.most_utilised_links.link_class.empty()) {
      out << " (the links the allreduces load most are the " << faster.many.most_utilised_links.link_class << " links)";
    }
    out << "; what stays exposed is the last bucket's allreduce, which backward cannot hide whatever the batch.";
  }
  out << "</p>";
  return out.str();
}

// Section 4: the input pipeline sets a floor under the step.
std::string input_pipeline() {
  Scenario sc = default_scenario();
  sc.setup.input.cores = 4;
  const Prediction few = predict_step(sc.setup, sc.cluster, 8, "ring", nullptr, Backend::simgrid);
  sc.setup.input.cores = 32;
  const Prediction many = predict_step(sc.setup, sc.cluster, 8, "ring", nullptr, Backend::simgrid);
  std::ostringstream out;
  out << "<p>Each node's CPUs decode and augment the images its accelerators train on. ResNet-50 on 8 V100s: with 4 "
         "decoding cores a node, a step takes <b>"
      << format_seconds(few.step.step_s) << "</b>, of which <b>" << format_seconds(few.step.input_stall_s)
      << "</b> waits for data.</p><p class=\"whatif\">What if each node gave the input pipeline 32 cores? "
         "Re-simulated: "
      << format_seconds(many.step.step_s) << " a step, " << format_seconds(many.step.input_stall_s)
      << " waiting: no faster network or allreduce would have helped.</p>";
  return out.str();
}

// Section 5: stale gradients in asynchronous training, with the real SGD kernel.
std::string staleness(bool quick) {
  const std::string dir = std::string(DTSIM_DATA_DIR) + "/scenarios/training/";
  TrainScenario sync = load_train_file(dir + "fashion-mnist-sync.json", DTSIM_DATA_DIR);
  TrainScenario async = load_train_file(dir + "fashion-mnist-async.json", DTSIM_DATA_DIR);
  const double epochs = quick ? 0.25 : 1.0;
  for (TrainScenario* t : {&sync, &async}) {
    t->config.epochs = epochs;
    t->config.eval_every_epochs = epochs;
  }
  const Dataset train = fashion_mnist_train(sync.data_directory);
  const Dataset test = fashion_mnist_test(sync.data_directory);
  const TrainReport s = run_sgd_training(sync.config, train, test, false, TrainBackend::flow);
  const TrainReport a = run_sgd_training(async.config, train, test, false, TrainBackend::flow);
  std::ostringstream out;
  out << "<p>An asynchronous parameter server applies each gradient as it arrives: no worker waits, but a gradient "
         "is computed on weights several updates old. Trained here for real (the MLP on Fashion-MNIST, "
      << sync.config.workers << " simulated workers, " << format_fixed(epochs, 2)
      << " epoch): synchronous allreduce reaches <b>" << format_percent(s.points.back().test_accuracy)
      << "</b> test accuracy in " << format_seconds(s.points.back().time_s) << " of simulated time; the asynchronous "
      << "server (" << async.config.workers << " workers) <b>" << format_percent(a.points.back().test_accuracy)
      << "</b> in " << format_seconds(a.points.back().time_s) << ", its gradients "
      << format_fixed(mean_staleness(a), 1)
      << " versions stale on average.</p><p class=\"whatif\">Staleness costs accuracy per epoch; what asynchrony "
         "buys is time per epoch, which pays only where workers wait for one another (stragglers, below). "
         "`dtsim train` with stragglers, jitter and backup workers shows where.</p>";
  return out.str();
}

// Section 6: the slowest of N draws sets every synchronous step.
std::string stragglers() {
  Scenario sc = default_scenario();
  sc.setup.input.enabled = false;
  sc.setup.variability.jitter.distribution = JitterDistribution::normal;
  sc.setup.variability.jitter.sigma = 0.02;
  StepSampling sampling;
  sampling.samples = 200;
  std::ostringstream out;
  out << "<p>No two steps take exactly as long, and a synchronous step waits for the slowest of its ranks: the "
         "expected largest of N draws grows like sqrt(2 ln N). ResNet-50 with 2% normal jitter per step, 200 samples "
         "each:</p><ul>";
  for (const int n : {8, 64, 512}) {
    const Prediction p =
        predict_step(sc.setup, sc.cluster, n, "ring", nullptr, Backend::flow, std::nullopt, true, sampling);
    out << "<li>" << n << " GPUs: the mean step is " << format_seconds(p.distribution.mean_s) << ", "
        << format_fixed(100 * (p.distribution.mean_s / p.step.step_s - 1), 1) << "% more than without jitter (p99 "
        << format_seconds(p.distribution.p99_s) << ")</li>";
  }
  out << "</ul><p class=\"whatif\">What if the jitter were gone? Each figure's \"without jitter\" step above is that "
         "what-if, simulated.</p>";
  return out.str();
}

}  // namespace

const char* lesson_usage() {
  static const std::string text =
      "usage: dtsim lesson [-o lesson.html] [--quick]\n"
      "One self-contained HTML page that walks why scaling stops being linear, one bottleneck per section, every\n"
      "number from a simulation run for it and each claim's what-if re-simulated (about a minute; --quick less).\n\n" +
      flags_help(lesson_flags);
  return text.c_str();
}

int lesson_command(std::span<char* const> args, std::ostream& out) {
  std::vector<char*> rest;
  static char output_flag[] = "--output";
  for (char* a : args)
    rest.push_back(std::string_view(a) == "-o" ? output_flag : a);
  const Flags flags(lesson_flags, rest);
  const std::string path = flags.get("output");
  if (!path.ends_with(".html")) throw UsageError("--output: expected a FILE.html, got '" + path + "'");
  try {
    check_output_folder(path);  // (before the lessons' simulations)
  } catch (const OutputPathError& e) {
    throw UsageError("--output: " + std::string(e.what()));
  }
  AlphaBetaGamma star;
  star.bandwidth_Bps = 10e9 / 8;
  star.alpha_s = 1e-6;
  struct Section {
    std::string title;
    std::string body;
  };
  std::vector<Section> sections;
  const auto add = [&](std::string title, const std::function<std::string()>& body) {
    std::cerr << "lesson: " << title << '\n';
    sections.push_back({std::move(title), body()});
  };
  add("1. Bandwidth and latency: ring against tree", [&] { return bandwidth_latency(star); });
  add("2. Who sends what to whom", [&] {
    return "<p>Seven ranks holding 1 to 7 reach 28 through a reduction tree (8 and 13, then 28, then the broadcast); "
           "four reach 10 by butterfly in two exchanges. Drawn from the algorithms' own schedules (dtsim draw).</p>" +
           draw_small("pipelined-tree", 7, {7, 5, 6, 1, 2, 3, 4}) + draw_small("butterfly", 4, {1, 2, 3, 4});
  });
  add("3. The parameter server's incast", [&] { return incast(star); });
  add("4. Small batches per accelerator", small_batches);
  add("5. The input pipeline", input_pipeline);
  add("6. Stale gradients: asynchronous training", [&] { return staleness(flags.has("quick")); });
  add("7. Stragglers: the slowest of N", stragglers);
  std::ostringstream page;
  page << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Why scaling stops being linear"
          "</title><style>body{font-family:sans-serif;max-width:1000px;margin:16px auto;color:#222;line-height:1.45}"
          "section{display:none}section.shown{display:block}.whatif{background:#f3f6fb;border-left:4px solid #4575b4;"
          "padding:6px 10px}button{font-size:14px;margin-right:6px}svg{max-width:100%;height:auto}</style></head><body>"
          "<h1>Why scaling stops being linear</h1><p>Every number below was simulated by dtsim when this page was "
          "made; every what-if was simulated again.</p><p><button id=\"previous\">previous</button><button "
          "id=\"next\">next</button><span id=\"where\"></span></p>\n";
  for (std::size_t i = 0; i < sections.size(); ++i) {
    page << "<section" << (i == 0 ? " class=\"shown\"" : "") << " data-section=\"" << i << "\"><h2>"
         << html(sections[i].title) << "</h2>" << sections[i].body << "</section>\n";
  }
  page << "<script>(function(){var s=document.querySelectorAll('section'),at=0;function show(i){s[at].classList."
          "remove('shown');at=Math.max(0,Math.min(s.length-1,i));s[at].classList.add('shown');document."
          "getElementById('where').textContent=' '+(at+1)+' of '+s.length;document.body.setAttribute('data-shown',"
          "at);}document.getElementById('previous').onclick=function(){show(at-1);};document.getElementById('next')."
          "onclick=function(){show(at+1);};show(0);if(location.hash==='#last'){for(var k=0;k<s.length;k++)document."
          "getElementById('next').click();}})();</script>\n</body></html>\n";
  write_file_atomically(path, [&](std::ostream& f) { f << page.str(); });
  out << "wrote " << path << ": " << sections.size() << " sections\n";
  return 0;
}

}  // namespace dtsim::cli
