// dtsim: a discrete-event simulator and performance model of distributed deep-learning training.
#include <algorithm>
#include <exception>
#include <iostream>
#include <span>
#include <string_view>

#include "cli/commands.hpp"
#include "cli/flags.hpp"

namespace {

constexpr const char* usage =
    "usage: dtsim COMMAND [flags]\n"
    "\n"
    "commands:\n"
    "  predict [SCENARIO]  training step time, throughput, speedup and bottleneck over accelerator counts and\n"
    "               allreduce algorithms (default: ResNet-50 on 4x V100 NVLink nodes, 1 to 64 GPUs)\n"
    "  explain [SCENARIO]  in words: what bounds the step at each size, where efficiency falls below 80%, and\n"
    "               what would help, each claim re-simulated\n"
    "  report RESULT.json... [-o FILE]  one self-contained HTML page of charts from predict, compare, train or\n"
    "               validate results\n"
    "  train FILE   real SGD on Fashion-MNIST by simulated workers (allreduce or parameter server, synchronous or\n"
    "               not): accuracy against simulated time\n"
    "  calibrate    measure this machine (compute, memory, reduction, MPI ping-pong) into a calibration file\n"
    "  validate     real MPI runs on an emulated cluster (network namespaces) against dtsim's predictions\n"
    "  collective   simulate one collective (default: ring allreduce of 100 MB on 8 ranks) and print its time,\n"
    "               algorithm bandwidth and bus bandwidth\n"
    "  compare      time allreduce algorithms over rank counts and sizes; mark winners and crossovers\n"
    "  verify       prove a schedule correct: sends meet receives, no deadlock, each contribution reduced once\n"
    "  cluster FILE build a cluster file's network and print its size, diameter and bisection bandwidth\n"
    "  help CMD     the flags of a command\n"
    "  help cluster-file | scenario-file | train-file | calibration-file\n"
    "               every field of those files, its default and what it accepts\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace dtsim::cli;
  const std::span<char* const> all(argv, static_cast<std::size_t>(argc));
  if (argc < 2) {
    std::cerr << usage;
    return 2;
  }
  const std::string_view command = argv[1];
  const auto rest = all.subspan(2);
  const bool wants_help = std::any_of(rest.begin(), rest.end(), [](const char* arg) {
    return std::string_view(arg) == "--help" || std::string_view(arg) == "-h";
  });
  try {
    if (wants_help || command == "help" || command == "--help" || command == "-h") {
      // dtsim help CMD, dtsim CMD --help: the command's flags
      const std::string_view topic = wants_help && command != "help" ? command : argc > 2 ? argv[2] : "";
      if (topic == "collective") {
        std::cout << collective_usage();
      } else if (topic == "compare") {
        std::cout << compare_usage();
      } else if (topic == "verify") {
        std::cout << verify_usage();
      } else if (topic == "cluster") {
        std::cout << cluster_usage();
      } else if (topic == "cluster-file") {
        std::cout << cluster_file_help();
      } else if (topic == "explain") {
        std::cout << explain_usage();
      } else if (topic == "report") {
        std::cout << report_usage();
      } else if (topic == "validate") {
        std::cout << validate_usage();
      } else if (topic == "calibrate") {
        std::cout << calibrate_usage();
      } else if (topic == "calibration-file") {
        std::cout << calibration_file_help();
      } else if (topic == "train") {
        std::cout << train_usage();
      } else if (topic == "train-file") {
        std::cout << train_file_help();
      } else if (topic == "predict") {
        std::cout << predict_usage();
      } else if (topic == "scenario-file") {
        std::cout << scenario_file_help();
      } else {
        std::cout << usage;
      }
      return 0;
    }
    if (command == "collective") return collective_command(rest, std::cout);
    if (command == "verify") return verify_command(rest, std::cout);
    if (command == "compare") return compare_command(rest, std::cout);
    if (command == "cluster") return cluster_command(rest, std::cout);
    if (command == "predict") return predict_command(rest, std::cout);
    if (command == "train") return train_command(rest, std::cout);
    if (command == "calibrate") return calibrate_command(rest, std::cout);
    if (command == "validate") return validate_command(rest, std::cout);
    if (command == "explain") return explain_command(rest, std::cout);
    if (command == "report") return report_command(rest, std::cout);
    std::cerr << "dtsim: unknown command '" << command
              << "' (accepted: predict, explain, report, train, calibrate, validate, collective, compare, verify, "
                 "cluster, help)\n";
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "dtsim " << command << ": " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dtsim " << command << ": error: " << e.what() << '\n';
    return 1;
  }
}
