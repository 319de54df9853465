#include "scenarios/scenario_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <unordered_set>

#include "algorithms/registry.hpp"
#include "scenarios/builtin_files.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"
#include "scenarios/profile_file.hpp"
#include "scenarios/units.hpp"

namespace dtsim {
namespace {

constexpr std::array<FieldSpec, 3> batch_fields{{
    choice_field("mode", "weak",
                 "weak: the batch per accelerator stays fixed as accelerators are added; strong: the global batch "
                 "stays fixed and is split",
                 "weak|strong"),
    ranged_field("size", FieldType::integer, "",
                 "weak: samples per accelerator in one micro-batch; strong: the global batch of an optimizer step", 1,
                 1 << 24),
    ranged_field("accumulation", FieldType::integer, "1",
                 "gradient accumulation: micro-batches per optimizer step; each runs forward and backward, the "
                 "gradients are reduced once in the last one's backward (DDP no_sync, Horovod "
                 "backward_passes_per_step) and the optimizer steps once; strong: the global batch splits over "
                 "accelerators x this",
                 1, 1 << 16),
}};

constexpr std::array<FieldSpec, 6> framework_fields{{
    choice_field("preset", "ddp",
                 "ddp: PyTorch DDP, 25 MiB buckets (the first 1 MiB) in reverse layer order, overlapped with "
                 "backward; horovod: tensor "
                 "fusion, 64 MB buffers started on a 5 ms cycle; none: one allreduce of all gradients after backward",
                 "ddp|horovod|none"),
    value_field("bucket", FieldType::size, "preset", "bucket (fusion buffer) size, overriding the preset's"),
    value_field("cycle", FieldType::duration, "preset", "horovod: cycle time, overriding the preset's 5 ms"),
    value_field("first_bucket", FieldType::size, "preset",
                "ddp: the first bucket's size, overriding the preset's 1 MiB (PyTorch's _DEFAULT_FIRST_BUCKET_BYTES)"),
    choice_field("reduce_precision", "precision",
                 "the dtype gradients are reduced in across replicas (allreduce, or ZeRO's reduce-scatter): precision "
                 "(the training precision's: 2 bytes in fp16, bf16 and fp8 training), or fp32 where the framework "
                 "reduces fp32 gradients (torchtitan's FSDP: mixed_precision_reduce \"float32\"; PyTorch's autocast "
                 "under DDP: the fp32 parameters' gradients), bf16 or fp16; ZeRO-3 still gathers parameters in the "
                 "training precision",
                 "precision|fp32|bf16|fp16"),
    value_field("overlap", FieldType::boolean, "true",
                "ddp and horovod: false starts no bucket's reduction before backward ends (then all in order), as "
                "PyTorch DDP with find_unused_parameters=True does when a parameter registered after the layers is "
                "used by the first (Transformer-XL's shared position biases): its buckets keep registration order "
                "and are reduced in sequence"),
}};

constexpr std::array<FieldSpec, 5> input_fields{{
    value_field("storage_bandwidth", FieldType::bandwidth, "", "read bandwidth of a node's storage"),
    value_field("sample_size", FieldType::size, "", "one sample as stored (e.g. 110KB for an ImageNet JPEG)"),
    ranged_field("decode_rate_per_core", FieldType::number, "",
                 "samples one CPU core decodes and augments per second (ImageNet JPEGs through torchvision's loader "
                 "on DGX hosts: about 220, 195 with AutoAugment, fitted to published runs: docs/validation.md)",
                 1e-9, unbounded),
    ranged_field("cores", FieldType::integer, "", "CPU cores of a node given to the input pipeline", 1, 4096),
    ranged_field("prefetch", FieldType::integer, "2", "batches each accelerator's loader may prepare ahead", 1, 1024),
}};

constexpr std::array<FieldSpec, 10> parallel_fields{{
    ranged_field("context", FieldType::integer, "1",
                 "context-parallel ranks (ring attention: each sequence split over them, a load-balanced share of "
                 "its tokens a rank, each attention layer's keys and values all-gathered before it in forward and "
                 "their gradients sent back in backward; the gradients reduced and ZeRO-sharded over data x context "
                 "ranks); placed next to the tensor ranks; transformer models; not with expert or search",
                 1, 1024),
    ranged_field("tensor", FieldType::integer, "1",
                 "tensor-parallel ranks (Megatron: transformer layers split, an allreduce after attention and after "
                 "the MLP in forward and in backward); must divide a node's accelerators",
                 1, 1024),
    ranged_field("pipeline", FieldType::integer, "1", "pipeline stages (contiguous layers of about equal FLOPs)", 1,
                 4096),
    ranged_field("micro_batches", FieldType::integer, "1",
                 "micro-batches a replica's batch is cut into per step; must divide it", 1, 1 << 20),
    choice_field("schedule", "1f1b",
                 "pipeline schedule: gpipe (all forwards, then all backwards) or 1f1b "
                 "(PipeDream-Flush: fewer activations in flight, the same bubble)",
                 "gpipe|1f1b"),
    choice_field("sharding", "none",
                 "ZeRO stage over the data-parallel ranks: zero1 shards optimizer states, zero2 also gradients, zero3 "
                 "(= fsdp) also parameters (allgathered before use)",
                 "none|zero1|zero2|zero3|fsdp"),
    choice_field("prefetch", "true", "zero3: gather the next layer's parameters while this one computes", "true|false"),
    ranged_field("expert", FieldType::integer, "1",
                 "expert-parallel ranks (MoE models): consecutive data-parallel replicas that split every MoE layer's "
                 "experts, with an all-to-all before and after the experts in forward and in backward; must divide "
                 "the replicas and the experts; not with zero3",
                 1, 4096),
    choice_field("async_tensor", "false",
                 "asynchronous tensor parallelism (torchtitan's async TP, Megatron-Core's tp_comm_overlap): each "
                 "tensor-parallel collective cut into tensor chunks that move while the projections beside it compute; "
                 "needs tensor > 1",
                 "true|false"),
    choice_field(
        "search", "false",
        "true: ignore tensor, pipeline and micro_batches and try every layout that fits in memory at each "
        "accelerator count, ranked by time per sample (weak scaling: every layout trains batch x accelerators)",
        "true|false"),
}};

constexpr std::array<FieldSpec, 5> jitter_fields{{
    choice_field(
        "distribution", "none",
        "how a rank's compute time varies: none; normal (time x (1 + sigma Z), at least 0.05x); lognormal "
        "(time x exp(sigma Z - sigma^2/2): mean 1, a long right tail); empirical (time x a measured step time "
        "over the measurements' mean, drawn uniformly from `times`, or from the calibration's SGD steps); "
        "replay (time x each rank's measured step times from `rank_times` over the mean of all ranks' times, "
        "side by side: a step takes every rank's k-th time, the samples walking k over the measured moments in "
        "turn, so what slowed all ranks at once slows them together)",
        "none|normal|lognormal|empirical|replay"),
    ranged_field("sigma", FieldType::number, "0",
                 "normal: standard deviation over the mean; lognormal: of the log (0.02 = 2%); > 0 for both", 0, 1),
    choice_field("per", "step",
                 "step: one draw per rank and step scales all its computes; kernel: one draw per compute (a layer's "
                 "forward or backward, the optimizer)",
                 "step|kernel"),
    value_field(
        "times", FieldType::raw, "(the calibration's)",
        "empirical: measured step times in seconds, a list of at least 2 positive numbers up to 1e9 (absent: the "
        "`calibration` file's SGD step times, from dtsim calibrate)"),
    value_field("rank_times", FieldType::raw, "(none)",
                "replay: measured step times in seconds, a list per rank (rank r takes list r mod the lists' count), "
                "every list as long, each time positive up to 1e9"),
}};

constexpr std::array<FieldSpec, 3> slow_node_fields{{
    ranged_field("fraction", FieldType::number, "0",
                 "the share of nodes that are slow (rounded to a count, at least one when > 0), chosen per sample "
                 "from the seed",
                 0, 1),
    ranged_field("nodes", FieldType::integer_list, "(none)", "slow nodes by index, from 0", 0, 1 << 24),
    ranged_field("slowdown", FieldType::number, "1", "how many times longer a slow node's computes take", 1, 1000),
}};

constexpr std::array<FieldSpec, 3> device_group_fields{{
    value_field("device", FieldType::text, "",
                "the nodes' accelerator: a built-in device or a path to a device file, relative to the scenario"),
    ranged_field("fraction", FieldType::number, "0",
                 "the share of nodes that have it (rounded to a count, at least one when > 0), chosen per sample", 0,
                 1),
    ranged_field("nodes", FieldType::integer_list, "(none)", "the nodes that have it, by index from 0", 0, 1 << 24),
}};

constexpr std::array<FieldSpec, 3> burst_fields{{
    ranged_field("load", FieldType::number, "", "the share of NIC and fabric bandwidth a burst takes", 0, 0.99),
    value_field("period", FieldType::duration, "", "a burst starts this often"),
    value_field("duration", FieldType::duration, "", "and lasts this long (at most the period)"),
}};

constexpr std::array<FieldSpec, 5> variability_fields{{
    object_field("jitter", false, "compute time that varies from rank to rank and step to step", jitter_fields),
    object_field("slow_nodes", false, "nodes slower than the rest (stragglers)", slow_node_fields),
    ranged_field("background_load", FieldType::number, "0",
                 "the share of NIC and fabric link bandwidth that other jobs' traffic takes (the job gets the rest)", 0,
                 0.99),
    object_list_field("devices",
                      "nodes of another accelerator than the scenario's (a mixed cluster): their ranks compute at "
                      "their device's speed",
                      device_group_fields),
    object_field("bursts", false,
                 "periodic bursts of other jobs' traffic: a gradient reduction that starts inside one takes 1 / (1 - "
                 "load) as long (the fast sampler, at a random phase per sample)",
                 burst_fields),
}};

constexpr std::array<FieldSpec, 5> failure_fields{{
    value_field("gpu", FieldType::text, "1.262e-5/h",
                "failures per hour (/h, /day or /year) of one accelerator (default: Llama 3's GPU, HBM, SRAM, GPU "
                "processor, thermal and SDC interruptions, 268 in 54 days on 16,384 H100s; docs/goodput.md)"),
    value_field("node", FieldType::text, "4.107e-5/h",
                "of one node: host hardware, maintenance and the job's software (Llama 3: 109 on 2,048 servers)"),
    value_field("nic", FieldType::text, "3.297e-7/h", "of one NIC (Llama 3: 7 on 16,384 NICs)"),
    value_field("link", FieldType::text, "1.648e-6/h",
                "of one NIC's link and switch port (Llama 3: 35 network switch and cable interruptions)"),
    value_field("switch", FieldType::text, "0/h",
                "of one fabric switch (0: Llama 3's switch failures are counted on links)"),
}};

constexpr std::array<FieldSpec, 5> checkpoint_fields{{
    value_field(
        "overhead", FieldType::duration, "0.5s",
        "what every checkpoint costs besides writing its bytes: the pause to snapshot the state (ByteCheckpoint "
        "2024: 0.34 to 0.59 s blocking on 1,488 to 8,960 GPUs)"),
    value_field("write_bandwidth_per_node", FieldType::bandwidth, "2GBps",
                "how fast each node writes its share of a checkpoint (NVIDIA DGX SuperPOD H100 storage guidance, "
                "\"good\": 2 GB/s single-node write)"),
    value_field("storage_bandwidth", FieldType::bandwidth, "2TBps",
                "the most the storage system takes from all nodes together (Llama 3's Tectonic: 2 TB/s sustainable)"),
    value_field("restart", FieldType::text, "10min",
                "from a failure to training again: detection, rescheduling, loading the checkpoint (s, min, h, d; "
                "Kokolis et al. 2024: 5 to 20 min)"),
    value_field("interval", FieldType::text, "optimal",
                "work between checkpoints (s, min, h, d), or optimal: the interval that minimises the expected wall "
                "time"),
}};

constexpr std::array<FieldSpec, 26> scenario_fields{{
    value_field("name", FieldType::text, "scenario", "a name for reports"),
    value_field("description", FieldType::text, "(none)", "what the scenario shows"),
    value_field("cluster", FieldType::text, "",
                "a built-in cluster (cpu-10gbe, cpu-25gbe, dgx-a100, dgx-a100-sharp, dgx-b200, dgx-h100, dgx1-v100, "
                "dgx2-v100, mi300x, mi355x, pcie4-100g, v100-nvlink-edr) or a path to a cluster file, relative to the "
                "scenario"),
    value_field("device", FieldType::name_or_object, "",
                "the accelerator: a built-in device (dtsim help device-file lists them; the old names v100, a100, "
                "h100, rtx3090 and xeon-8380 still work), a path to a device file relative to the scenario, a device "
                "object inline (the fields of a device file's \"device\"), or calibrated (the machine of "
                "`calibration`)"),
    [] {
      FieldSpec f = value_field("model", FieldType::name_or_object, "",
                                "a built-in model (scenarios/models/NAME.json: resnet50, bert-large, gpt2-xl, "
                                "llama-3-8b, ...; `dtsim help model-file` lists them), a path to a model file "
                                "relative to the scenario, or a model object as a model file's (docs/models.md)");
      f.required_when = "there is no profile";
      return f;
    }(),
    value_field("profile", FieldType::text, "(none)",
                "compute measured on one device instead of the device model: a torch.profiler trace (.json) or a CSV "
                "of layer times (.csv), relative to the scenario (docs/profiles.md); its layers are the model, its "
                "batch the only one predicted"),
    object_field("batch", true, "the batch and how it scales", batch_fields),
    choice_field("precision", "fp32",
                 "the layers' math: fp32, tf32, fp16, bf16 or fp8 (fp32 master weights but for fp32 and tf32; fp8 "
                 "keeps bf16 storage), or mixed: fp16 where the device has it, else bf16; the device must have it",
                 "fp32|tf32|fp16|bf16|fp8|mixed"),
    choice_field("optimizer", "momentum", "the update: sgd, momentum or adam (sets optimizer state and update time)",
                 "sgd|momentum|adam"),
    choice_field("optimizer_loop", "multi_tensor",
                 "how the update is launched: multi_tensor (the whole model in a few kernels: apex's fused "
                 "optimizers, PyTorch's foreach default since 2.0) or per_tensor (a loop over the parameter tensors, "
                 "each update's kernels issued by the host: PyTorch 1.x's optimizers); docs/compute.md",
                 "multi_tensor|per_tensor"),
    object_field("framework", false, "how gradients are bucketed and when their allreduces start", framework_fields),
    object_field("input", false, "the input pipeline of each node (absent: data is always ready)", input_fields),
    ranged_field("accelerators", FieldType::integer_list, "", "accelerator counts to predict (1 is the baseline)", 1,
                 1 << 20),
    value_field("algorithms", FieldType::text, "",
                "allreduce algorithms, comma-separated (ring,tree,...), all, or auto (the collective library's choice "
                "per gradient bucket: NCCL's tuner on a cluster that names one, MPICH's thresholds elsewhere)"),
    choice_field("runtime", "eager",
                 "how the framework issues kernels: eager (PyTorch, the host dispatches each kernel), cuda_graphs (a "
                 "step replayed from one launch) or xla (compiled: memory-bound kernels fused); docs/compute.md",
                 "eager|cuda_graphs|xla"),
    choice_field("recompute", "none",
                 "activation recomputation: none, selective (attention scores recomputed, not kept), selective_op "
                 "(torchtitan's per-op policy: every second matrix product of a transformer block and its "
                 "memory-bound kernels run again in backward) or full (each layer's forward run again in backward; "
                 "only its input kept); docs/compute.md",
                 "none|selective|selective_op|full"),
    value_field("flash_attention", FieldType::boolean, "false",
                "attention by a fused kernel that never writes the score matrix (FlashAttention)"),
    choice_field(
        "memory_format", "nhwc",
        "how image tensors are laid out: nhwc (channels last, as cuDNN's tensor-core convolutions read them) or "
        "nchw (PyTorch's default: on a GPU in fp16, bf16 and fp8 each convolution transposes its tensors to "
        "NHWC and back); docs/compute.md",
        "nhwc|nchw"),
    ranged_field("efficiency", FieldType::number, "device",
                 "achieved / peak FLOP/s of large kernels in every precision, replacing the device's efficiency and "
                 "tensor_efficiency",
                 1e-6, 1),
    value_field("kernel_launch", FieldType::duration, "device",
                "device time per kernel, replacing the device's kernel_launch"),
    ranged_field("steps", FieldType::integer, "3", "simulated steps; the last is reported", 1, 100),
    value_field("calibration", FieldType::text, "(none)",
                "a calibration file (dtsim calibrate), relative to the scenario: its network factors apply to the "
                "cluster, and device \"calibrated\" becomes the measured machine"),
    object_field("parallel", false,
                 "model parallelism: data x tensor x pipeline with optional ZeRO sharding (absent: plain data "
                 "parallelism); the data-parallel degree is accelerators / (tensor x pipeline)",
                 parallel_fields),
    object_field("variability", false,
                 "jitter, slow nodes and background traffic (absent: every rank computes its mean times on an idle "
                 "fabric); predict --samples draws the step's distribution (docs/variability.md)",
                 variability_fields),
    object_field("failures", false,
                 "component failure rates, for predict --run, --samples-to-train or --tokens (docs/goodput.md)",
                 failure_fields),
    object_field("checkpoint", false, "checkpoint writes and restarts, for the same run estimates", checkpoint_fields),
}};

constexpr std::array<FieldSpec, 1> scenario_document_fields{{
    object_field("scenario", true, "the scenario", scenario_fields),
}};

// The first index whose value an earlier entry already holds, or values.size() if none. By sorting the indices
// (stably: within equal values they stay in list order, so each run's second index is its first repeat), not by
// searching the entries before each one: node lists may hold millions.
template <typename T>
std::size_t first_repeat(const std::vector<T>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&values](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::size_t first = values.size();
  for (std::size_t k = 1; k < order.size(); ++k) {
    const bool repeats = values[order[k]] == values[order[k - 1]];
    const bool second = k < 2 || values[order[k - 1]] != values[order[k - 2]];
    if (repeats && second) first = std::min(first, order[k]);
  }
  return first;
}

void check_distinct_nodes(const std::vector<int>& nodes, const std::string& path) {
  if (const std::size_t i = first_repeat(nodes); i < nodes.size()) {
    throw ScenarioError(path + "[" + std::to_string(i) + "]: node " + std::to_string(nodes[i]) +
                        " is listed twice; give each once");
  }
}

// A list of measured step times at JSON path `at`, each a positive number of seconds up to 1e9 (their mean, which the
// jitter's factors divide by, must not overflow); the caller checks the list's length.
std::vector<double> step_times_at(const nlohmann::json& list, const std::string& at) {
  std::vector<double> times;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_number() || !(list[i].get<double>() > 0) || !(list[i].get<double>() <= max_duration_s)) {
      throw ScenarioError(at + "[" + std::to_string(i) + "]: expected a positive number of seconds up to 1e9, got " +
                          list[i].dump());
    }
    times.push_back(list[i].get<double>());
  }
  return times;
}

Variability read_variability(const JsonObject& v, const std::optional<Calibration>& calibration,
                             const std::string& precision, const std::string& base_dir, const std::string& data_dir,
                             bool profile) {
  Variability out;
  double fractions = 0;
  std::unordered_set<int> named;  // the nodes earlier entries gave a device
  for (const JsonObject& g : v.objects("devices")) {
    if (profile) throw ScenarioError(g.path_of("device") + ": not with a profile (its times are one device's)");
    DeviceGroup group;
    try {
      group.device = load_named_device(g.text("device"), base_dir, data_dir);
      precision_for(precision, group.device);
    } catch (const ScenarioError& e) {
      throw ScenarioError(g.path_of("device") + ": " + e.what());
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(g.path_of("device") + ": " + e.what());
    }
    group.precision = precision;
    group.fraction = g.number("fraction");
    if (g.has("nodes")) {
      for (const long long n : g.integer_list("nodes"))
        group.nodes.push_back(static_cast<int>(n));
    }
    if ((group.fraction > 0) == !group.nodes.empty()) {
      throw ScenarioError(g.path_of("nodes") + ": give either nodes or a fraction > 0");
    }
    for (std::size_t i = 0; i < group.nodes.size(); ++i) {
      if (named.contains(group.nodes[i])) {
        throw ScenarioError(g.path_of("nodes") + "[" + std::to_string(i) + "]: node " + std::to_string(group.nodes[i]) +
                            " already has a device from an earlier entry");
      }
    }
    check_distinct_nodes(group.nodes, g.path_of("nodes"));
    named.insert(group.nodes.begin(), group.nodes.end());
    fractions += group.fraction;
    if (fractions > 1 + 1e-12) {
      throw ScenarioError(g.path_of("fraction") + ": the devices' fractions add up to " + std::to_string(fractions) +
                          "; together at most 1 (the share of nodes with another device)");
    }
    out.devices.push_back(std::move(group));
  }
  if (v.has("bursts")) {
    const JsonObject b = v.object("bursts");
    out.bursts = {b.number("load"), b.seconds("period"), b.seconds("duration")};
    if (out.bursts.period_s <= 0 || out.bursts.duration_s <= 0 || out.bursts.duration_s > out.bursts.period_s) {
      throw ScenarioError(b.path_of("duration") + ": expected 0 < duration <= period");
    }
    if (out.bursts.load <= 0) throw ScenarioError(b.path_of("load") + ": expected a load > 0");
  }
  const JsonObject jitter = v.object("jitter");
  const std::string distribution = jitter.choice("distribution");
  ComputeJitter& j = out.jitter;
  j.distribution = distribution == "normal"      ? JitterDistribution::normal
                   : distribution == "lognormal" ? JitterDistribution::lognormal
                   : distribution == "empirical" ? JitterDistribution::empirical
                   : distribution == "replay"    ? JitterDistribution::replay
                                                 : JitterDistribution::none;
  j.sigma = jitter.number("sigma");
  j.scope = jitter.choice("per") == "kernel" ? JitterScope::kernel : JitterScope::step;
  const bool sigma_used =
      j.distribution == JitterDistribution::normal || j.distribution == JitterDistribution::lognormal;
  if (sigma_used && j.sigma <= 0)
    throw ScenarioError(jitter.path_of("sigma") + ": " + distribution + " needs sigma > 0");
  if (!sigma_used && jitter.has("sigma")) {
    throw ScenarioError(jitter.path_of("sigma") + ": only for distribution normal or lognormal");
  }
  if (j.distribution != JitterDistribution::empirical && jitter.has("times")) {
    throw ScenarioError(jitter.path_of("times") + ": only for distribution empirical");
  }
  if (j.distribution != JitterDistribution::replay && jitter.has("rank_times")) {
    throw ScenarioError(jitter.path_of("rank_times") + ": only for distribution replay");
  }
  if (j.distribution == JitterDistribution::replay) {
    if (j.scope != JitterScope::step) {
      throw ScenarioError(jitter.path_of("per") + ": replay scales a rank's whole step; accepted: step");
    }
    if (!jitter.has("rank_times")) {
      throw ScenarioError(jitter.path_of("rank_times") + ": replay needs a list of measured step times per rank");
    }
    const nlohmann::json& rows = jitter.json("rank_times");
    const std::string at = jitter.path_of("rank_times");
    if (!rows.is_array() || rows.empty()) {
      throw ScenarioError(at +
                          ": expected a list per rank of measured step times in seconds, e.g. [[0.51, 0.50], "
                          "[0.55, 0.53]]");
    }
    std::vector<std::vector<double>> times;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::string row_at = at + "[" + std::to_string(r) + "]";
      if (!rows[r].is_array() || rows[r].empty()) {
        throw ScenarioError(row_at + ": expected a non-empty list of step times in seconds");
      }
      if (rows[r].size() != rows[0].size()) {
        throw ScenarioError(row_at + ": has " + std::to_string(rows[r].size()) + " times, " + at + "[0] " +
                            std::to_string(rows[0].size()) + "; every rank needs as many");
      }
      times.push_back(step_times_at(rows[r], row_at));
    }
    j.rank_factors = replay_factors(times);
  }
  if (j.distribution == JitterDistribution::empirical) {
    std::vector<double> times;
    if (jitter.has("times")) {
      const nlohmann::json& list = jitter.json("times");
      if (!list.is_array() || list.size() < 2) {
        throw ScenarioError(jitter.path_of("times") + ": expected a list of at least 2 step times in seconds");
      }
      times = step_times_at(list, jitter.path_of("times"));
    } else if (calibration && calibration->step_times_s.size() >= 2) {
      times = calibration->step_times_s;
    } else {
      throw ScenarioError(jitter.path_of("times") +
                          ": empirical needs measured step times here, or a calibration file that has them (dtsim "
                          "calibrate records them)");
    }
    j.factors = empirical_factors(times);
  }
  const JsonObject slow = v.object("slow_nodes");
  out.slow.fraction = slow.number("fraction");
  if (slow.has("nodes")) {
    for (const long long n : slow.integer_list("nodes"))
      out.slow.nodes.push_back(static_cast<int>(n));
  }
  check_distinct_nodes(out.slow.nodes, slow.path_of("nodes"));
  if (out.slow.fraction > 0 && !out.slow.nodes.empty()) {
    throw ScenarioError(slow.path_of("nodes") + ": give either nodes or a fraction > 0, not both");
  }
  out.slow.slowdown = slow.number("slowdown");
  if ((out.slow.fraction > 0 || !out.slow.nodes.empty()) && out.slow.slowdown == 1) {
    throw ScenarioError(slow.path_of("slowdown") + ": slow nodes need a slowdown > 1");
  }
  if (out.slow.slowdown != 1 && out.slow.fraction == 0 && out.slow.nodes.empty()) {
    throw ScenarioError(slow.path_of("slowdown") + ": which nodes? give fraction or nodes");
  }
  out.background_load = v.number("background_load");
  return out;
}

FailureSettings read_run_settings(const JsonObject& failures, const JsonObject& checkpoint) {
  FailureSettings run;
  const auto rate = [&](std::string_view key) {
    const std::string text = failures.text(key);  // (its own errors name the path already)
    try {
      return parse_rate_per_h(text);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(failures.path_of(key) + ": " + e.what());
    }
  };
  run.rates.gpu_per_h = rate("gpu");
  run.rates.node_per_h = rate("node");
  run.rates.nic_per_h = rate("nic");
  run.rates.link_per_h = rate("link");
  run.rates.switch_per_h = rate("switch");
  run.write_Bps_per_node = checkpoint.bandwidth_Bps("write_bandwidth_per_node");
  run.storage_Bps = checkpoint.bandwidth_Bps("storage_bandwidth");
  run.overhead_s = checkpoint.seconds("overhead");
  try {
    run.restart_s = parse_long_seconds(checkpoint.text("restart"));
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(checkpoint.path_of("restart") + ": " + e.what());
  }
  if (const std::string interval = checkpoint.text("interval"); interval != "optimal") {
    try {
      run.interval_s = parse_long_seconds(interval, 1);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(checkpoint.path_of("interval") + ": " + e.what() + ", or optimal");
    }
  }
  return run;
}

}  // namespace

ClusterSpec load_named_cluster(const std::string& name, const std::string& base_dir, const std::string& data_dir) {
  std::filesystem::path file;
  if (name.ends_with(".json")) {  // unlike devices and models, a name with a '/' but no .json is a built-in name
    file = path_from(name, base_dir);
  } else {
    file = builtin_dir(data_dir, "clusters") / (name + ".json");
    if (!std::filesystem::exists(file)) {
      throw ScenarioError("unknown cluster '" + name + "' (built-in: " + builtin_list(data_dir, "clusters") +
                          "; or a path to a .json cluster file)");
    }
  }
  return load_cluster_file(file.string());
}

void apply_device_overrides(Scenario& scenario) {
  if (scenario.efficiency) {
    scenario.setup.device.efficiency = *scenario.efficiency;
    scenario.setup.device.tensor_efficiency = *scenario.efficiency;
    // in every precision and kernel family, as the field says: the device's fitted kernel rates do not apply
    scenario.setup.device.conv_tensor_rate = scenario.setup.device.conv_tf32_rate = 1;
    scenario.setup.device.gemm_tf32_rate = 1;
  }
  if (scenario.kernel_launch_s) scenario.setup.device.kernel_launch_s = *scenario.kernel_launch_s;
}

Scenario parse_scenario(const nlohmann::json& document, const std::string& base_dir, const std::string& data_dir,
                        ScenarioCheck check) {
  const bool cross = check == ScenarioCheck::full;
  const JsonObject root(document, "", scenario_document_fields);
  const JsonObject o = root.object("scenario");
  Scenario sc;
  sc.name = o.text("name");
  sc.description = o.text("description");
  sc.cluster_name = o.text("cluster");
  try {
    sc.cluster = load_named_cluster(sc.cluster_name, base_dir, data_dir);
  } catch (const ScenarioError& e) {
    throw ScenarioError(o.path_of("cluster") + ": " + e.what());
  }
  TrainingSetup& setup = sc.setup;
  if (o.has("profile")) {
    if (o.has("model")) {
      throw ScenarioError(o.path_of("model") + ": not with a profile (the profile's layers are the model)");
    }
    std::filesystem::path file(o.text("profile"));
    if (file.is_relative()) file = std::filesystem::path(base_dir) / file;
    try {
      setup.profile = load_profile_file(file.string());
    } catch (const ScenarioError& e) {
      throw ScenarioError(o.path_of("profile") + ": " + e.what());
    }
    setup.model = model_of(*setup.profile);
  } else if (!o.has("model")) {
    throw ScenarioError(o.path_of("model") + ": required (or a profile)");
  } else if (const nlohmann::json& model = o.name_or_object("model"); model.is_object()) {
    setup.model = parse_model(model, o.path_of("model"));  // errors name scenario.model.KEY
  } else {
    try {
      setup.model = load_named_model(model.get<std::string>(), base_dir, data_dir);
    } catch (const ScenarioError& e) {
      throw ScenarioError(o.path_of("model") + ": " + e.what());
    }
  }
  std::optional<Calibration> calibration;
  if (o.has("calibration")) {
    std::filesystem::path file(o.text("calibration"));
    if (file.is_relative()) file = std::filesystem::path(base_dir) / file;
    try {
      calibration = load_calibration_file(file.string());
    } catch (const ScenarioError& e) {
      throw ScenarioError(o.path_of("calibration") + ": " + e.what());
    }
    setup.network_factors = network_factors(calibration->network);
  }
  if (!o.is_object("device") && o.text("device") == "calibrated") {
    if (!calibration) throw ScenarioError(o.path_of("device") + ": \"calibrated\" needs a calibration file");
    setup.device = calibrated_device(*calibration);
    if (setup.device.memory_bytes <= 0) {
      throw ScenarioError(o.path_of("calibration") + ": the calibration records no memory size for the device");
    }
  } else if (o.is_object("device")) {
    setup.device = read_device(o.json("device"), o.path_of("device"));
    setup.device.origin = "inline (" + o.path_of("device") + ")";
  } else {
    const std::string device = o.text("device");
    try {
      setup.device = load_named_device(device, base_dir, data_dir);
    } catch (const ScenarioError& e) {
      const bool path = device.ends_with(".json") || device.find('/') != std::string::npos;
      throw ScenarioError(o.path_of("device") + ": " + e.what() +
                          (path ? "" : " (or calibrated, with a calibration file)"));
    }
  }
  if (o.has("efficiency")) sc.efficiency = o.number("efficiency");
  if (o.has("kernel_launch")) sc.kernel_launch_s = o.seconds("kernel_launch");
  apply_device_overrides(sc);
  const JsonObject batch = o.object("batch");
  setup.scaling = batch.choice("mode") == "weak" ? ScalingMode::weak : ScalingMode::strong;
  setup.batch = static_cast<int>(batch.integer("size"));
  setup.accumulation = static_cast<int>(batch.integer("accumulation"));
  if (setup.profile && (setup.scaling != ScalingMode::weak || setup.batch != setup.profile->batch)) {
    throw ScenarioError(batch.path_of("size") + ": the profile was measured at " +
                        std::to_string(setup.profile->batch) + " samples a step: weak scaling at that batch only");
  }
  sc.precision_name = o.choice("precision");
  try {
    setup.compute.precision = precision_for(sc.precision_name, setup.device);
  } catch (const std::invalid_argument& e) {
    if (cross) throw ScenarioError(o.path_of("precision") + ": " + e.what());
  }
  const std::string optimizer = o.choice("optimizer");
  setup.compute.optimizer = optimizer == "sgd"        ? Optimizer::sgd
                            : optimizer == "momentum" ? Optimizer::momentum
                                                      : Optimizer::adam;
  setup.compute.optimizer_loop = *optimizer_loop_from_string(o.choice("optimizer_loop"));
  setup.compute.runtime = *runtime_from_string(o.choice("runtime"));
  setup.compute.recompute = *recompute_from_string(o.choice("recompute"));
  setup.compute.flash_attention = o.has("flash_attention") && o.boolean("flash_attention");
  setup.compute.memory_format = *memory_format_from_string(o.choice("memory_format"));
  const JsonObject framework = o.object("framework");
  const std::string preset = framework.choice("preset");
  apply_preset(setup, preset == "ddp"       ? FrameworkPreset::ddp
                      : preset == "horovod" ? FrameworkPreset::horovod
                                            : FrameworkPreset::none);
  if (framework.has("bucket")) {
    if (setup.framework == FrameworkPreset::none) {
      throw ScenarioError(framework.path_of("bucket") + ": not with preset \"none\" (one allreduce of everything)");
    }
    setup.bucket_bytes = static_cast<double>(framework.bytes("bucket", 1));
  }
  if (framework.has("first_bucket")) {
    if (setup.framework != FrameworkPreset::ddp) {
      throw ScenarioError(framework.path_of("first_bucket") + ": only for preset \"ddp\"");
    }
    setup.first_bucket_bytes = static_cast<double>(framework.bytes("first_bucket", 1));
  }
  parse_reduce_precision(framework.choice("reduce_precision"), setup.reduce_precision);  // (a choice: always known)
  if (framework.has("overlap")) {
    if (setup.framework == FrameworkPreset::none) {
      throw ScenarioError(framework.path_of("overlap") + ": not with preset \"none\" (one allreduce after backward)");
    }
    setup.overlap = framework.boolean("overlap");
  }
  if (framework.has("cycle")) {
    if (setup.framework != FrameworkPreset::horovod) {
      throw ScenarioError(framework.path_of("cycle") + ": only for preset \"horovod\"");
    }
    setup.fusion_cycle_s = framework.seconds("cycle");
  }
  if (o.has("input")) {
    const JsonObject in = o.object("input");
    setup.input.enabled = true;
    setup.input.storage_Bps = in.bandwidth_Bps("storage_bandwidth");
    setup.input.sample_bytes = static_cast<double>(in.bytes("sample_size"));
    setup.input.decode_samples_per_s_per_core = in.number("decode_rate_per_core");
    setup.input.cores = static_cast<int>(in.integer("cores"));
    setup.input.prefetch = static_cast<int>(in.integer("prefetch"));
  }
  setup.steps = static_cast<int>(o.integer("steps"));
  setup.variability = read_variability(o.object("variability"), calibration, sc.precision_name, base_dir, data_dir,
                                       setup.profile.has_value());
  sc.run = read_run_settings(o.object("failures"), o.object("checkpoint"));
  if (setup.variability.background_load > 0) apply_background_load(sc.cluster, setup.variability.background_load);
  for (long long a : o.integer_list("accelerators"))
    sc.accelerators.push_back(static_cast<int>(a));
  if (const std::size_t i = first_repeat(sc.accelerators); i < sc.accelerators.size()) {
    throw ScenarioError(o.path_of("accelerators") + ": " + std::to_string(sc.accelerators[i]) +
                        " is listed twice; give each once");
  }
  if (cross) check_variability_nodes(sc, sc.accelerators, o.path_of("accelerators"));
  const std::string algorithms = o.text("algorithms");
  if (algorithms == "all") {
    for (const AlgorithmInfo& info : dtsim::algorithms()) {
      if (info.collective == Collective::allreduce && !info.switch_helpers) sc.algorithms.emplace_back(info.name);
    }
  } else {
    for (const std::string& name : split_list(algorithms)) {
      if (name != "auto") {  // auto: the library's choice per bucket (sim/algorithm_choice.hpp)
        try {
          find_algorithm(name);
        } catch (const std::invalid_argument& e) {
          throw ScenarioError(o.path_of("algorithms") + ": " + e.what() + "; or auto");
        }
      }
      sc.algorithms.push_back(name);
    }
    if (const std::size_t i = first_repeat(sc.algorithms); i < sc.algorithms.size()) {
      throw ScenarioError(o.path_of("algorithms") + ": '" + sc.algorithms[i] + "' is listed twice; give each once");
    }
  }
  if (o.has("parallel")) {
    const JsonObject par = o.object("parallel");
    ParallelSpec spec;
    spec.context = static_cast<int>(par.integer("context"));
    spec.tensor = static_cast<int>(par.integer("tensor"));
    spec.pipeline = static_cast<int>(par.integer("pipeline"));
    spec.micro_batches = static_cast<int>(par.integer("micro_batches"));
    spec.schedule = par.choice("schedule") == "gpipe" ? PipelineSchedule::gpipe : PipelineSchedule::one_f_one_b;
    const std::string sharding = par.choice("sharding");
    spec.sharding = sharding == "none"    ? Sharding::none
                    : sharding == "zero1" ? Sharding::zero1
                    : sharding == "zero2" ? Sharding::zero2
                                          : Sharding::zero3;
    spec.prefetch = par.choice("prefetch") == "true";
    spec.expert = static_cast<int>(par.integer("expert"));
    spec.async_tensor = par.choice("async_tensor") == "true";
    spec.search = par.choice("search") == "true";
    if (spec.async_tensor && spec.tensor == 1 && !spec.search) {
      throw ScenarioError(par.path_of("async_tensor") + ": true needs tensor > 1 (there are no tensor-parallel " +
                          "collectives to overlap), got tensor 1");
    }
    if (spec.context > 1 && spec.search) {
      throw ScenarioError(par.path_of("context") + ": not with search (the search tries data x tensor x pipeline " +
                          "layouts), got context " + std::to_string(spec.context));
    }
    if (par.has("prefetch") && spec.sharding != Sharding::zero3 && !spec.search) {  // (it had been ignored)
      throw ScenarioError(par.path_of("prefetch") + ": only with sharding \"zero3\" (it gathers the next layer's " +
                          "parameters ahead), got sharding \"" + sharding + "\"");
    }
    if (!spec.search && cross) {
      if (!tensor_fits_nodes(spec.tensor, sc.cluster.node.accelerators)) {
        throw ScenarioError(
            par.path_of("tensor") + ": " + std::to_string(spec.tensor) + " neither divides a node's " +
            std::to_string(sc.cluster.node.accelerators) +
            " accelerators nor is a multiple of them (a tensor group is part of a node or whole nodes)");
      }
      if (static_cast<std::size_t>(spec.pipeline) > setup.model.layers.size()) {
        throw ScenarioError(par.path_of("pipeline") + ": " + std::to_string(spec.pipeline) + " stages for " +
                            std::to_string(setup.model.layers.size()) + " layers");
      }
      for (int a : sc.accelerators) {
        const int split = spec.context * spec.tensor * spec.pipeline;
        if (a % split != 0) {
          throw ScenarioError(o.path_of("accelerators") + ": " + std::to_string(a) + " is not a multiple of " +
                              (spec.context > 1 ? "context x " : "") + "tensor x pipeline = " + std::to_string(split));
        }
        if (const std::string why = expert_layout_problem(setup.model, spec.layout(a)); !why.empty()) {
          throw ScenarioError(par.path_of("expert") + ": " + why + " (at " + std::to_string(a) + " accelerators)");
        }
        if (const std::string why = context_layout_problem(setup.model, spec.layout(a)); !why.empty()) {
          throw ScenarioError(par.path_of("context") + ": " + why + " (at " + std::to_string(a) + " accelerators)");
        }
      }
    }
    if (setup.accumulation > 1) {
      throw ScenarioError(batch.path_of("accumulation") +
                          ": not with \"parallel\" (a layout's micro-batches are parallel.micro_batches)");
    }
    sc.parallel = spec;
    return sc;  // batches split per replica, checked when each layout is predicted
  }
  if (cross) check_batch_splits(sc, sc.accelerators, batch.path_of("size"));
  return sc;
}

void check_batch_splits(const Scenario& scenario, const std::vector<int>& accelerators, const std::string& where) {
  if (scenario.setup.scaling != ScalingMode::strong) return;
  const int micro = scenario.setup.accumulation;
  for (int a : accelerators) {
    if (scenario.setup.batch % (static_cast<long long>(a) * micro) != 0) {
      throw ScenarioError(where + ": a global batch of " + std::to_string(scenario.setup.batch) +
                          " does not split evenly over " + std::to_string(a) + " accelerators" +
                          (micro > 1 ? " x " + std::to_string(micro) + " micro-batches" : std::string()));
    }
  }
}

void check_variability_nodes(const Scenario& scenario, const std::vector<int>& accelerators, const std::string& where) {
  const Variability& v = scenario.setup.variability;
  const long long per_node = std::max(1, scenario.cluster.node.accelerators);
  long long largest = 0;
  for (int a : accelerators)
    largest = std::max<long long>(largest, a);
  const long long nodes = (largest + per_node - 1) / per_node;
  const auto check = [&](const std::vector<int>& list, const std::string& path) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i] >= nodes) {
        throw ScenarioError(path + "[" + std::to_string(i) + "]: node " + std::to_string(list[i]) +
                            ", but the largest size (" + where + ": " + std::to_string(largest) +
                            " accelerators) has " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") +
                            ", numbered from 0");
      }
    }
  };
  check(v.slow.nodes, "scenario.variability.slow_nodes.nodes");
  for (std::size_t g = 0; g < v.devices.size(); ++g)
    check(v.devices[g].nodes, "scenario.variability.devices[" + std::to_string(g) + "].nodes");
}

Scenario load_scenario_file(const std::string& path, const std::string& data_dir, ScenarioCheck check) {
  return parse_json_file(path, [&](const nlohmann::json& document) {
    return parse_scenario(document, std::filesystem::path(path).parent_path().string(), data_dir, check);
  });
}

std::string scenario_fields_markdown() { return fields_markdown("scenario", scenario_fields); }

}  // namespace dtsim
