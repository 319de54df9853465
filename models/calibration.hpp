// What a calibration measured, as the models use it: piecewise alpha-beta network fits by message size, the
// machine's compute and memory rates, and the SGD kernel's step time. Plain values; calibrate/ produces them,
// scenarios/calibration_file.cpp reads them back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim {

// alpha + bytes / bandwidth for messages of at least min_bytes (and below the next range's min_bytes).
struct NetworkRange {
  double min_bytes = 0;
  double alpha_s = 0;
  double bandwidth_Bps = 0;
};

// SimGrid-style correction factors for messages of at least min_bytes: latency x latency_factor, bandwidth x
// bandwidth_factor (SMPI's piecewise latency and bandwidth factors).
struct FactorRange {
  double min_bytes = 0;
  double latency_factor = 1;
  double bandwidth_factor = 1;
};

struct Calibration {
  std::string machine;      // the machine description, as recorded
  std::string cpu;          // its processor
  double memory_bytes = 0;  // its main memory (0: not recorded)
  std::string date;
  std::vector<NetworkRange> network;  // ascending min_bytes; empty when the network was not measured
  double message_gap_s = 0;           // per-message gap g from the message-rate test (0: not measured)
  double gemm_flops_per_s = 0;        // the best GEMM rate measured
  double memory_Bps = 0;              // STREAM-like triad
  double reduce_Bps = 0;              // summing float arrays, bytes of the reduced buffer per second
  double kernel_overhead_s = 0;       // SGD kernel step time = overhead + per_sample x batch
  double kernel_per_sample_s = 0;
  std::vector<double> step_times_s;  // consecutive SGD kernel steps at one batch (empty: not measured)
};

// The calibrated machine as a device of the compute model: its best GEMM rate as peak with efficiency 1, its triad
// bandwidth, its memory, and the SGD kernel's fixed step time spread over the kernel's 2 layers x 2 passes.
class Device;
Device calibrated_device(const Calibration& calibration);

// The nominal network a calibration describes: the largest latency of its ranges (so that every range's latency is a
// factor of it, even when the large-message fit has none) and the bandwidth of the largest messages. Requires a
// non-empty list.
NetworkRange reference_network(const std::vector<NetworkRange>& ranges);
// The factors that turn the reference network into the calibrated piecewise one.
std::vector<FactorRange> network_factors(const std::vector<NetworkRange>& ranges);
// The factor range that applies to a message of `bytes` (the default {0, 1, 1} when there are none).
FactorRange factors_for(const std::vector<FactorRange>& factors, double bytes);

}  // namespace dtsim
