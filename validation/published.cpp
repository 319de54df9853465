#include "validation/published.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/collective_library.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/input_rates_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/predict.hpp"
#include "validation/published_layout.hpp"
#include "validation/validate.hpp"

namespace dtsim {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct ModelChoice {
  std::string name;
  std::string why_not;
};

// Which dtsim model a row's model is, by the names its sources use.
ModelChoice model_of(const PublishedRow& row) {
  const std::string m = lower(row.model);
  // Llama runs (torchtitan, pytorch/ao): tokens/s per device of fixed-length sequences; Llama 3.1 has Llama 3's
  // architecture at 8B and 70B (a longer RoPE context only)
  if (row.throughput_unit == "tokens/s per device") {
    for (const auto& [names, file] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"llama 3 8b", "llama 3.1 8b"}, "llama-3-8b"},
             {{"llama 3 70b", "llama 3.1 70b"}, "llama-3-70b"},
             {{"llama 3.1 405b"}, "llama-3.1-405b"},
             {{"llama 2 13b"}, "llama-2-13b"},
             {{"llama 2 70b"}, "llama-2-70b"}}) {
      if (std::find(names.begin(), names.end(), m) != names.end()) return {file, ""};
    }
    return {"", "no dtsim model of " + row.model};
  }
  // tokens/s of a model trained on fixed-length segments (Transformer-XL: tgt_len tokens a sample) are its samples/s
  // x the segment; GNMT's and Transformer-big's batches hold sentences of varying length, which the sources do not give
  if (has(row.throughput_unit, "tokens/s")) {
    if (has(m, "transformer-xl base")) return {"transformer-xl-base", ""};
    if (has(m, "transformer-xl large")) return {"transformer-xl-large", ""};
    return {"", "throughput in " + row.throughput_unit +
                    " of sentences of varying length (dtsim predicts fixed-length sequences; the sources do not give "
                    "the lengths)"};
  }
  if (!has(row.throughput_unit, "images/s") && !has(row.throughput_unit, "sequences/s")) {
    return {"", "throughput in " + row.throughput_unit + " (dtsim predicts samples/s)"};
  }
  std::string name;
  if (has(m, "resnet-50") || has(m, "resnet50") || has(m, "resnet 50")) name = "resnet50";
  if (has(m, "bert-large")) name = "bert-large";
  if (has(m, "bert-base")) name = "bert-base";
  if (m == "timm resnet101") name = "resnet101";
  if (m == "timm resnet152") name = "resnet152";
  if (m == "timm vit_small_patch16_224") name = "vit-s-16";
  if (m == "timm vit_base_patch16_224") name = "vit-b-16";
  if (m == "timm vit_large_patch16_224") name = "vit-l-16";
  if (m == "timm vgg16") name = "vgg16";
  // ResNeXt, SE-ResNeXt and EfficientNet as their model files build them (NVIDIA's ConvNets names and timm's); their
  // grouped and depthwise convolutions run at the devices' fitted grouped_half_channels (since session 29)
  for (const char* file : {"resnext101-32x4d", "se-resnext101-32x4d", "efficientnet-b0", "efficientnet-b4"}) {
    if (m == file) name = file;
  }
  if (m == "timm resnext50_32x4d") name = "resnext50-32x4d";
  if (m == "timm resnext101_32x4d") name = "resnext101-32x4d";
  if (m == "timm efficientnet_b0") name = "efficientnet-b0";
  if (m == "timm efficientnet_b4") {  // timm's benchmark trains B4 at 320 px (the row's notes)
    return {"", "EfficientNet-B4 at 320 px (dtsim's model file is B4 at 380 px, as NVIDIA's ConvNets train it)"};
  }
  if (name.empty()) return {"", "no dtsim model of " + row.model};
  return {name, ""};
}

// The cluster a multi-device row ran on, by its interconnect; "" when the source does not say.
std::string cluster_of(const PublishedRow& row) {
  const std::string i = row.interconnect;
  // DLPerf's nodes: a DGX-1's NVLink mesh with one EDR NIC (sources.md)
  if (has(i, "MT27700")) return "validation/published/clusters/dlperf-v100-edr1.json";
  if (has(i, "DGX-2")) return "dgx2-v100";
  if (has(i, "DGX-1") || (has(row.device, "v100") && has(i, "NVLink") && has(i, "InfiniBand"))) return "dgx1-v100";
  if (has(i, "8x V100-SXM2")) return "dgx1-v100";
  if (has(i, "DGX A100")) return "dgx-a100";
  if (has(i, "DGX-H100") || has(i, "DGX H100")) return "dgx-h100";
  // Meta's Grand Teton hosts: 8 H100 on NVLink (NVSwitch) and a 400 Gb/s RDMA NIC a GPU, as a DGX H100 has
  if (has(i, "Grand Teton")) return "dgx-h100";
  // an HGX H200 host: the same NVLink switches and a 400 Gb/s ConnectX-7 a GPU
  if (has(i, "8 H200 a host")) return "dgx-h100";
  if (has(i, "8 MI300X")) return "mi300x";
  return "";
}

// "fp32" in a source is the framework's default math, which is tf32 on parts that have it: NGC PyTorch containers
// allow tf32 in cuDNN and cuBLAS (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1), NGC TensorFlow from 20.06 and TensorFlow 2.4 in
// both, and PyTorch from 1.7 in cuDNN convolutions (torch.backends.cudnn.allow_tf32 defaults to true).
bool fp32_runs_as_tf32(const PublishedRow& row, const std::string& model, const Device& device) {
  if (!device.has(Precision::tf32)) return false;
  if (has(row.software_version, "NGC") || has(row.framework, "TensorFlow")) return true;
  return has(model, "resnet") || has(model, "resnext") || has(model, "efficientnet") ||
         has(model, "vgg");  // plain PyTorch: convolutions only
}

std::optional<Precision> precision_of(const PublishedRow& row, const std::string& model, const Device& device) {
  if (row.precision == "fp32") return fp32_runs_as_tf32(row, model, device) ? Precision::tf32 : Precision::fp32;
  // AMP: fp16 tensor math where the part has it (bf16 otherwise), as precision "mixed" does
  const std::string name = row.precision == "amp" ? "mixed" : row.precision;
  try {
    return precision_for(name, device);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

// A built-in model, a transformer at the row's sequence length (BERT's phase 1 trains at 128, phase 2 at 512).
Model model_at_sequence(const std::string& name, int sequence, const std::string& data_dir) {
  nlohmann::json document = read_json_file(data_dir + "/scenarios/models/" + name + ".json");
  nlohmann::json& model = document.at("model");
  if (sequence > 0 && model.contains("sequence")) model["sequence"] = sequence;
  return parse_model_document(document);
}

// DLE PyTorch BERT pre-training (run_pretraining.py from 2019-08 to 2022-03, e.g. at 793b92dc, 2020-03-15) wraps the
// model in apex DDP with message_size=250000000 elements unless it allreduces after accumulation: a bucket larger than
// BERT-base, so the allreduce starts when backward ends instead of overlapping it. DLPerf's BERT rows leave
// --allreduce_post_accumulation off; NVIDIA's own tables of that era ran scripts/run_pretraining.sh, whose default
// turns it on (sources.md).
bool apex_ddp_whole_model(const PublishedRow& row) {
  return has(row.source_url, "Oneflow-Inc/DLPerf") && has(row.source_url, "/PyTorch/BERT/");
}

// DeepLearningExamples' PyTorch ConvNets keep fp32 weights in mixed precision, so their gradients are fp32 when DDP
// reduces them: at 729963dd (the 21.03 tables) image_classification/training.py runs torch.cuda.amp's autocast under
// torch's DistributedDataParallel, at 46ff3707 (20.06) main.py runs apex's amp at opt_level "O1" (which patches
// functions and leaves the weights fp32) under apex's DistributedDataParallel.
bool reduces_fp32_gradients(const PublishedRow& row) {
  return has(row.source_url, "NVIDIA/DeepLearningExamples") && has(row.source_url, "/PyTorch/Classification/ConvNets/");
}

// NVIDIA's BERT pre-training scripts reduce the accumulated gradients once, after the last micro-batch's backward,
// as one flat buffer: PyTorch's run_pretraining.sh passes --allreduce_post_accumulation (run_pretraining.py then
// allreduces a flattened copy of the gradients after the accumulation steps), TensorFlow's run_pretraining_lamb
// scripts and run.sub pass --allreduce_post_accumulation=True (optimization.py then wraps the optimizer in Horovod's
// DistributedOptimizer only without it, and allreduces the accumulators at the update). Nothing overlaps backward.
// NVIDIA's PyTorch Transformer-XL wraps its model in DistributedDataParallel(find_unused_parameters=True) (train.py),
// so DDP keeps its buckets in reverse registration order (it rebuilds them in the gradients' order only without
// find_unused_parameters: Reducer::should_rebuild_buckets) and reduces them strictly in sequence
// (Reducer::mark_bucket_ready); MemTransformerLM registers the relative-position biases every layer uses, r_w_bias
// and r_r_bias, last (_create_params, called at the end of __init__), so the first bucket, which holds them, is
// complete only when the first layer's backward, the last, is done: no reduction starts before backward ends.
bool ddp_buckets_wait_for_backward(const PublishedRow& row) {
  return has(row.source_url, "NVIDIA/DeepLearningExamples") && has(row.source_url, "/Transformer-XL/") &&
         has(row.framework, "PyTorch");
}

bool allreduce_post_accumulation(const PublishedRow& row) {
  return has(row.source_url, "NVIDIA/DeepLearningExamples") && has(row.source_url, "/LanguageModeling/BERT/") &&
         has(row.model, "pre-training");
}

// A step's samples a second as `dtsim predict` times it (flow executor, the ring). A row whose gradients are
// reduced after the last backward (allreduce_post_accumulation's one reduction, or ddp_buckets_wait_for_backward's
// buckets) overlaps nothing with its reduction: its step
// is its one-device step (the same micro-batches and optimizer) plus the reduction, which neither the device's
// parameters nor the input pipeline's move. The fit predicts each row hundreds of times with other device parameters,
// and a collective library's ring on hundreds of GPUs costs seconds to simulate, so the reduction's seconds are kept
// per row (by everything of the row that sets them) after its first full prediction and added to the one-device step
// from then on (PublishedMapping::reuse_reductions); tests/test_published.cpp checks the sum against the full
// prediction at other parameters.
double samples_per_s(const TrainingSetup& setup, const ClusterSpec& spec, const PublishedRow& row,
                     const std::string& cluster_name, bool reuse_reductions) {
  if (!reuse_reductions || row.device_count <= 1 || reductions_overlap_backward(setup) || setup.input.enabled) {
    return predict_step(setup, spec, row.device_count, "ring", nullptr, Backend::flow, 0, true).samples_per_s;
  }
  static std::mutex mutex;
  static std::map<std::string, double> reduction_s;  // by the row's key: step seconds beyond one device's
  const std::string key = row.id + "|" + row.model + "|" + row.precision + "|" + std::to_string(row.device_count) +
                          "|" + std::to_string(row.nodes) + "|" + std::to_string(row.sequence_length) + "|" +
                          std::to_string(row.accumulation) + "|" + std::to_string(row.batch_per_device) + "|" +
                          cluster_name + "|" + spec.library.name;
  const Prediction one = predict_step(setup, spec, 1, "ring", nullptr, Backend::flow, 0, true);
  const double samples_per_step = one.samples_per_s * one.step.step_s * row.device_count;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = reduction_s.find(key); it != reduction_s.end()) {
      return samples_per_step / (one.step.step_s + it->second);
    }
  }
  const Prediction all = predict_step(setup, spec, row.device_count, "ring", nullptr, Backend::flow, 0, true);
  const std::lock_guard<std::mutex> lock(mutex);
  reduction_s[key] = all.step.step_s - one.step.step_s;
  return all.samples_per_s;
}

}  // namespace

ErrorStats error_stats(const std::vector<double>& abs_errors) {
  ErrorStats s;
  s.rows = static_cast<int>(abs_errors.size());
  if (abs_errors.empty()) return s;
  s.median_abs_error = percentile(abs_errors, 0.5);
  s.p90_abs_error = percentile(abs_errors, 0.9);
  return s;
}

std::string published_device_name(const PublishedRow& row) {
  // DGX-2 and DGX-2H hold V100-SXM3-32GB parts (DGX-2H at 450 W): the SXM2 32 GB file is the nearest dtsim has
  static const std::map<std::string, std::string> names{{"v100-sxm2-16gb", "v100-sxm2-16gb"},
                                                        {"v100-16gb", "v100-sxm2-16gb"},
                                                        {"v100-sxm2-32gb", "v100-sxm2-32gb"},
                                                        {"v100-32gb-dgx2", "v100-sxm2-32gb"},
                                                        {"a100-sxm4-40gb", "a100-sxm4-40gb"},
                                                        {"a100-sxm4-80gb", "a100-sxm4-80gb"},
                                                        {"a100-pcie-40gb", "a100-pcie-40gb"},
                                                        {"a100-pcie-80gb", "a100-pcie-80gb"},
                                                        {"h100-sxm", "h100-sxm5-80gb"},
                                                        {"h100-sxm-80gb", "h100-sxm5-80gb"},
                                                        {"h100-pcie-80gb", "h100-pcie-80gb"},
                                                        {"h200-sxm-140gb", "h200-sxm-141gb"},
                                                        {"b200-192gb", "b200-sxm-180gb"},
                                                        {"rtx3090", "rtx-3090"},
                                                        {"rtx4090", "rtx-4090"},
                                                        {"rtxa6000", "rtx-a6000"},
                                                        {"rtx6000-ada", "rtx-6000-ada"},
                                                        {"quadro-rtx8000", "quadro-rtx-8000"},
                                                        {"a10", "a10"},
                                                        {"h100-hbm2e-96gb-500w", "h100-hbm2e-96gb-500w"},
                                                        {"mi300x", "mi300x"}};
  const auto it = names.find(row.device);
  return it == names.end() ? "" : it->second;
}

namespace {

// How a run fed its images: DLE's PyTorch ConvNets in the 21.03 container ran `launch.py --mode benchmark_training`
// on ImageNet, whose configs.yml (2bdf2775, 2021-04) leaves the data backend at the models' `pytorch` (torchvision's
// loader: JPEG decoding and augmentation in `workers` processes per GPU on the host's cores) with 8 workers a GPU on
// DGX-1 and 16 on DGX A100, and AutoAugment for EfficientNet. The hosts: DGX-1, 2 x Xeon E5-2698 v4 (40 cores); DGX
// A100, 2 x EPYC 7742 (128 cores), as their datasheets give them.
struct CpuLoader {
  int workers_per_device = 0;
  int node_cores = 0;
  bool autoaugment = false;
};

std::optional<CpuLoader> cpu_loader_of(const PublishedRow& row, const std::string& model) {
  if (!row.id.starts_with("dle-pt-") || !has(row.software_version, "21.03")) return std::nullopt;
  const bool effnet = model.starts_with("efficientnet");
  if (!effnet && model != "resnet50" && model != "resnext101-32x4d" && model != "se-resnext101-32x4d")
    return std::nullopt;
  if (row.device.starts_with("v100-sxm2")) return CpuLoader{8, 40, effnet};
  if (row.device.starts_with("a100-sxm4")) return CpuLoader{16, 128, effnet};
  return std::nullopt;
}

}  // namespace

PublishedMapping default_published_mapping(const std::string& data_dir) {
  PublishedMapping m;
  m.device_of = [data_dir](const std::string& name) { return load_named_device(name, data_dir, data_dir); };
  if (const std::optional<PublishedInputRates> rates = load_shipped_input_rates(data_dir)) {
    m.decode_per_core = rates->decode_per_core;
    m.decode_per_core_autoaugment = rates->decode_per_core_autoaugment;
  }
  return m;
}

PublishedResult predict_published(const std::vector<PublishedRow>& rows, const std::string& split,
                                  const PublishedMapping& mapping, const std::string& data_dir) {
  PublishedResult result;
  std::map<std::string, ClusterSpec> clusters;
  auto cluster = [&](const std::string& name) -> const ClusterSpec& {
    auto it = clusters.find(name);
    if (it == clusters.end()) it = clusters.emplace(name, load_named_cluster(name, data_dir, data_dir)).first;
    return it->second;
  };
  std::map<std::pair<std::string, int>, Model> models;  // by name and sequence: each file read once
  auto model_of_row = [&](const std::string& name, int sequence) -> const Model& {
    auto it = models.find({name, sequence});
    if (it == models.end())
      it = models.emplace(std::pair{name, sequence}, model_at_sequence(name, sequence, data_dir)).first;
    return it->second;
  };
  for (const PublishedRow& row : rows) {
    if (split != "all" && row.split != split) continue;
    PublishedCase c;
    c.row = row;
    c.device = published_device_name(row);
    const ModelChoice model = model_of(row);
    std::string cluster_name = row.device_count > 1 ? cluster_of(row) : "dgx-a100";
    if (c.device.empty()) {
      c.not_modelled = "no dtsim device for " + row.device;
    } else if (!model.why_not.empty()) {
      c.not_modelled = model.why_not;
    } else if (has(row.notes, "sequence binning")) {
      c.not_modelled =
          "sequences binned by length, each batch padded to its longest (dtsim predicts fixed-length "
          "sequences; the source does not state the lengths)";
    } else if (row.layout.given && !layout_not_modelled(row).empty()) {
      c.not_modelled = layout_not_modelled(row);
    } else if (row.batch_per_device == 0) {
      c.not_modelled = "the source does not state the per-device batch";
    } else if (cluster_name.empty()) {
      c.not_modelled = "the source does not state how its " + std::to_string(row.device_count) + " devices connect";
    }
    if (!c.not_modelled.empty()) {
      c.device.clear();
      result.cases.push_back(c);
      continue;
    }
    TrainingSetup setup;
    setup.model = model_of_row(model.name, row.sequence_length);
    c.model = model.name;
    c.grouped = std::any_of(setup.model.layers.begin(), setup.model.layers.end(),
                            [](const Layer& l) { return l.channels_per_group > 0; });
    setup.device = mapping.device_of(c.device);
    const std::optional<Precision> precision = precision_of(row, model.name, setup.device);
    if (!precision) {
      c.not_modelled = "precision " + row.precision + " on " + c.device;
      c.device.clear();
      result.cases.push_back(c);
      continue;
    }
    setup.compute.precision = *precision;
    const bool convs = std::any_of(setup.model.layers.begin(), setup.model.layers.end(),
                                   [](const Layer& l) { return l.kind == LayerKind::conv; });
    c.tf32_convs = convs && *precision == Precision::tf32;
    c.tf32 = *precision == Precision::tf32;
    c.tensor_convs = convs && *precision != Precision::tf32 && *precision != Precision::fp32;
    // BERT's Adam or LAMB, Transformer-XL's LAMB (jitlamb in NVIDIA's configs): each reads and writes the weights, the
    // gradient and two moments (LAMB's per-tensor norms aside), costed as Adam
    setup.compute.optimizer =
        has(model.name, "bert") || has(model.name, "transformer-xl") ? Optimizer::adam : Optimizer::momentum;
    // the layout the run used (convolutional networks; sources.md says where each is stated)
    if (row.memory_format == "nchw") setup.compute.memory_format = MemoryFormat::nchw;
    // TensorFlow as NVIDIA's examples ran it: XLA on; PyTorch: eager
    setup.compute.runtime = has(row.framework, "TensorFlow") ? Runtime::xla : Runtime::eager;
    setup.scaling = ScalingMode::weak;
    setup.batch = row.batch_per_device;
    setup.accumulation = row.accumulation;  // the optimizer and the gradients' reduction once per that many batches
    apply_preset(setup, has(row.framework, "TensorFlow") ? FrameworkPreset::horovod : FrameworkPreset::ddp);
    if (allreduce_post_accumulation(row)) apply_preset(setup, FrameworkPreset::none);
    if (ddp_buckets_wait_for_backward(row)) setup.overlap = false;
    if (reduces_fp32_gradients(row)) setup.reduce_precision = Precision::fp32;
    if (apex_ddp_whole_model(row)) {
      setup.bucket_bytes = 250e6 * gradient_bytes_per_param(setup.compute.precision);
      setup.first_bucket_bytes = setup.bucket_bytes;
    }
    setup.steps = 2;
    const bool laid_out = row.layout.given;
    if (!laid_out) c.fits = memory_use(setup, setup.batch).total_bytes() <= setup.device.memory_bytes;
    const TrainingSetup as_laid_out = setup;  // (its device's memory as the file gives it)
    setup.device.memory_bytes = 1e18;  // the measured run fitted: predict its time whatever the memory model says
    ClusterSpec spec = cluster(cluster_name);
    const int per_node = (row.device_count + row.nodes - 1) / row.nodes;
    if (row.device_count > 1 && per_node > spec.node.accelerators) {
      c.not_modelled = std::to_string(per_node) + " devices a node on " + cluster_name + " of " +
                       std::to_string(spec.node.accelerators);
      c.device.clear();
      result.cases.push_back(c);
      continue;
    }
    spec.nodes = std::max(spec.nodes, row.nodes);
    // Every multi-GPU row ran its gradients' allreduce through NCCL (NGC containers: PyTorch's DDP and apex, Horovod
    // and TensorFlow's all-reduce all call it on NVIDIA GPUs): a channel on every NIC, NCCL's protocols, in the
    // constants of the GPU's generation, unless the cluster file names its library; by default only for the rows
    // whose reduction overlaps nothing (PublishedMapping::multi_gpu_library).
    const bool nccl =
        mapping.multi_gpu_library == PublishedLibrary::nccl ||
        (mapping.multi_gpu_library == PublishedLibrary::nccl_after_backward && !reductions_overlap_backward(setup));
    if (!spec.library.enabled() && nccl) {
      if (const std::string generation = generation_of_accelerator(c.device); !generation.empty()) {
        spec.library.name = "nccl";
        parse_generation(generation, spec.library.generation);
      }
    }
    if (const std::optional<CpuLoader> loader = cpu_loader_of(row, model.name)) {
      c.cpu_input = true;
      c.autoaugment = loader->autoaugment;
      const double rate = loader->autoaugment ? mapping.decode_per_core_autoaugment : mapping.decode_per_core;
      if (rate > 0) {
        setup.input.enabled = true;
        setup.input.storage_Bps = 1;  // (no bytes read: the images in the page cache)
        setup.input.sample_bytes = 0;
        setup.input.decode_samples_per_s_per_core = rate;
        setup.input.cores = std::min(loader->node_cores, loader->workers_per_device * per_node);
      }
    }
    if (laid_out) {
      const LayoutPrediction p = predict_layout_row(row, as_laid_out, spec);
      c.fits = p.fits;
      c.predicted = p.tokens_per_device_s;
    } else {
      c.predicted = samples_per_s(setup, spec, row, cluster_name, mapping.reuse_reductions);
      if (has(row.throughput_unit, "tokens/s")) c.predicted *= setup.model.tokens_per_sample;
    }
    c.error = (c.predicted - row.throughput) / row.throughput;
    result.cases.push_back(c);
  }
  summarize_published(result);
  return result;
}

void summarize_published(PublishedResult& result) {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_device, by_model;
  for (const PublishedCase& c : result.cases) {
    if (c.device.empty()) continue;  // not modelled
    all.push_back(std::fabs(c.error));
    by_device[c.device].push_back(std::fabs(c.error));
    by_model[c.model].push_back(std::fabs(c.error));
  }
  result.overall = error_stats(all);
  result.by_device.clear();
  result.by_model.clear();
  for (const auto& [name, errors] : by_device)
    result.by_device.emplace_back(name, error_stats(errors));
  for (const auto& [name, errors] : by_model)
    result.by_model.emplace_back(name, error_stats(errors));
}

}  // namespace dtsim
