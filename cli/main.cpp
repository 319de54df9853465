// dtsim: a discrete-event simulator and performance model of distributed deep-learning training.
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <span>
#include <string_view>

#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "reports/output_file.hpp"

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
    "  import-profile FILE  a torch.profiler trace or CSV of one device's step, layer by layer (the compute\n"
    "               input of predict --profile)\n"
    "  calibrate    measure this machine (compute, memory, reduction, MPI ping-pong) into a calibration file\n"
    "  validate     real MPI runs on an emulated cluster (network namespaces) against dtsim's predictions\n"
    "  collective   simulate one collective (default: ring allreduce of 100 MB on 8 ranks) and print its time,\n"
    "               algorithm bandwidth and bus bandwidth\n"
    "  compare      time allreduce algorithms over rank counts and sizes; mark winners and crossovers\n"
    "  lesson       one HTML page that walks why scaling stops being linear, every number simulated for it\n"
    "  draw         a collective's schedule as pictures, round by round (SVG, or HTML to step through)\n"
    "  verify       prove a schedule correct: sends meet receives, no deadlock, each contribution reduced once\n"
    "  cluster FILE build a cluster file's network and print its size, diameter and bisection bandwidth\n"
    "  help CMD     the flags of a command\n"
    "  help cluster-file | scenario-file | device-file | model-file | train-file | calibration-file\n"
    "               every field of those files, its default and what it accepts\n";

// The help text of a command or file topic, or nullptr when `topic` is none.
const char* help_text(std::string_view topic) {
  using namespace dtsim::cli;
  if (topic == "collective") return collective_usage();
  if (topic == "compare") return compare_usage();
  if (topic == "verify") return verify_usage();
  if (topic == "cluster") return cluster_usage();
  if (topic == "cluster-file") return cluster_file_help();
  if (topic == "explain") return explain_usage();
  if (topic == "report") return report_usage();
  if (topic == "validate") return validate_usage();
  if (topic == "calibrate") return calibrate_usage();
  if (topic == "calibration-file") return calibration_file_help();
  if (topic == "train") return train_usage();
  if (topic == "train-file") return train_file_help();
  if (topic == "predict") return predict_usage();
  if (topic == "scenario-file") return scenario_file_help();
  if (topic == "device-file") return device_file_help();
  if (topic == "model-file") return model_file_help();
  if (topic == "import-profile") return import_profile_usage();
  if (topic == "draw") return draw_usage();
  if (topic == "lesson") return lesson_usage();
  if (topic == "help") return usage;
  return nullptr;
}

constexpr const char* commands =
    "predict, explain, report, train, import-profile, calibrate, validate, collective, compare, draw, lesson, verify, "
    "cluster, help";
constexpr const char* topics =
    "predict, explain, report, train, import-profile, calibrate, validate, collective, compare, draw, lesson, verify, "
    "cluster, cluster-file, "
    "scenario-file, device-file, model-file, train-file, calibration-file";

// Runs a command; -1 when there is no such command.
int run_command(std::string_view command, std::span<char* const> rest) {
  using namespace dtsim::cli;
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
  if (command == "import-profile") return import_profile_command(rest, std::cout);
  if (command == "draw") return draw_command(rest, std::cout);
  if (command == "lesson") return lesson_command(rest, std::cout);
  return -1;
}

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
  // what was printed must have reached its destination (a full disk, a closed pipe: not a success)
  const auto written = [&](int status) {
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "dtsim " << command << ": cannot write the standard output\n";
      return 2;
    }
    return status;
  };
  try {
    if (command == "--help" || command == "-h" || (command == "help" && (argc == 2 || (argc == 3 && wants_help)))) {
      std::cout << usage;
      return written(0);
    }
    if (command == "help" || wants_help) {
      // dtsim help TOPIC, dtsim CMD ... --help: the command's flags or the file's fields
      if (command == "help" && argc > 3) {
        std::cerr << "dtsim help: expected one topic, got " << argc - 2 << " arguments (topics: " << topics << ")\n";
        return 2;
      }
      const char* text = nullptr;
      if (command == "help") {
        text = help_text(argv[2]);
        if (text == nullptr) {
          std::cerr << "dtsim help: unknown topic '" << argv[2] << "' (topics: " << topics << ")\n";
          return 2;
        }
      } else {
        const bool file_topic = command.ends_with("-file");  // dtsim help cluster-file, not dtsim cluster-file -h
        text = file_topic ? nullptr : help_text(command);
        if (text == nullptr) {
          std::cerr << "dtsim: unknown command '" << command << "' (accepted: " << commands << ")\n";
          return 2;
        }
      }
      std::cout << text;
      return written(0);
    }
    const int status = run_command(command, rest);
    if (status < 0) {
      std::cerr << "dtsim: unknown command '" << command << "' (accepted: " << commands << ")\n";
      return 2;
    }
    return written(status);
  } catch (const UsageError& e) {
    std::cerr << "dtsim " << command << ": " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    // what no estimate caught: a request larger than this machine's memory
    std::cerr << "dtsim " << command << ": " << dtsim::cli::out_of_memory_text << '\n';
    return 2;
  } catch (const dtsim::OutputPathError& e) {  // an output file the user named that cannot be written
    std::cerr << "dtsim " << command << ": output: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dtsim " << command << ": error: " << e.what() << '\n';
    return 1;
  }
}
