// Flags of `dtsim predict` and `dtsim explain` that override a scenario's fields from the command line, so that a
// what-if needs no scenario file: --accelerators and --nodes (the sizes), --batch, --accumulation, --model, --device,
// --precision, --runtime, --recompute, --memory-format, --optimizer-loop, --reduce-precision and --async-tensor (lists:
// one variant of the scenario per combination of their values), --cluster (replaces the scenario's cluster). Every
// value is checked before anything is simulated; a bad one is a UsageError naming its flag.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/flags.hpp"
#include "cli/library_flag.hpp"
#include "scenarios/scenario_file.hpp"

namespace dtsim::cli {

constexpr std::array<FlagSpec, 16> scenario_override_flags{{
    {"accelerators", "LIST", "from the scenario", "accelerator counts, e.g. 1,2,4,...,64"},
    {"nodes", "LIST", "from the scenario",
     "node counts (accelerators = nodes x accelerators per node of the cluster), e.g. 1,2,...,16; not with "
     "--accelerators"},
    {"batch", "LIST", "from the scenario",
     "batch sizes, replacing scenario.batch.size (weak scaling: per accelerator, also with \"parallel\"; "
     "strong: the global batch); a list runs the scenario once per size, e.g. 16,32,64 or 16,...,256"},
    {"accumulation", "LIST", "from the scenario",
     "gradient accumulation, replacing scenario.batch.accumulation: micro-batches per optimizer step (the gradients "
     "reduced and the optimizer run once per step); a list runs the scenario once per value, e.g. 1,2,4,8; not with "
     "\"parallel\" (parallel.micro_batches)"},
    {"model", "LIST", "from the scenario",
     "models, replacing the scenario's: built-in ones (scenarios/models/NAME.json: resnet50, bert-large, gpt2-xl, "
     "llama-3-8b, ...; `dtsim help model-file` lists them) or paths to model files; a list runs the scenario once "
     "per model"},
    {"profile", "FILE", "from the scenario",
     "compute measured on one device instead of the device model: a torch.profiler trace (.json) or a CSV of layer "
     "times (docs/profiles.md); its layers become the model and its batch the batch per accelerator; not with --model"},
    {"device", "LIST", "from the scenario",
     "accelerators' device, replacing the scenario's: a built-in device (dtsim help device-file lists them; the old "
     "names v100, a100, h100, rtx3090, xeon-8380 still work) or a path to a device file (the scenario's efficiency "
     "and layer_overhead still apply); a list runs the scenario once per device"},
    {"precision", "LIST", "from the scenario",
     "fp32, tf32, fp16, bf16, fp8 or mixed (fp16 where the device has it, else bf16), replacing the scenario's; the "
     "device must have it; fp32,mixed runs both"},
    {"runtime", "LIST", "from the scenario",
     "how the framework issues kernels, replacing scenario.runtime: eager (PyTorch, the host dispatches each kernel), "
     "cuda_graphs or xla (docs/compute.md); eager,cuda_graphs runs both"},
    {"recompute", "LIST", "from the scenario",
     "activation recomputation, replacing scenario.recompute: none, selective, selective_op or full (less memory, more "
     "compute); a "
     "list runs the scenario once per value"},
    {"memory-format", "LIST", "from the scenario",
     "how image tensors are laid out, replacing scenario.memory_format: nhwc (channels last) or nchw (16-bit "
     "convolutions transpose to NHWC and back; docs/compute.md); nhwc,nchw runs both"},
    {"optimizer-loop", "LIST", "from the scenario",
     "how the optimizer's update is launched, replacing scenario.optimizer_loop: multi_tensor (the whole model in a "
     "few kernels) or per_tensor (PyTorch 1.x: each parameter tensor's kernels from the host; docs/compute.md); "
     "multi_tensor,per_tensor runs both"},
    {"reduce-precision", "LIST", "from the scenario",
     "the dtype gradients are reduced in across replicas, replacing scenario.framework.reduce_precision: precision "
     "(the training precision's), fp32 (torchtitan's FSDP, PyTorch's autocast under DDP), bf16 or fp16; "
     "precision,fp32 runs both"},
    {"async-tensor", "LIST", "from the scenario",
     "asynchronous tensor parallelism, replacing scenario.parallel.async_tensor: true (each tensor-parallel collective "
     "moves in chunks while the projections beside it compute: torchtitan's async TP) or false; needs the scenario's "
     "\"parallel\" layout with tensor > 1, or --search; false,true runs both"},
    {"cluster", "NAME|FILE", "from the scenario",
     "the cluster, replacing the scenario's: a built-in one (cpu-10gbe, cpu-25gbe, dgx-a100, dgx-a100-sharp, dgx-b200, "
     "dgx-h100, dgx1-v100, dgx2-v100, mi300x, mi355x, pcie4-100g, v100-nvlink-edr) or a path to a cluster file; "
     "--nodes counts its nodes"},
    library_flag,
}};

// One variant of the scenario: the scenario with one value of each list flag.
struct ScenarioVariant {
  Scenario scenario;
  std::vector<std::pair<std::string, std::string>> values;  // (flag, value) of the flags given with several values
  std::string describe() const;                             // e.g. "batch 32" or "model bert-large, batch 32"
  nlohmann::json values_json() const;                       // e.g. {"model": "bert-large", "batch": 32}
};

struct ScenarioVariants {
  std::vector<ScenarioVariant> variants;  // at least one; the last flag (--batch) varies fastest
  std::string where;                      // what set the sizes: scenario.accelerators, --accelerators or --nodes
  bool several() const { return variants.size() > 1; }
};

// The scenario with the flags applied. `search`: layouts will be searched (predict --search), so the scenario's own
// layout is not checked against the sizes and batches. Throws UsageError naming the flag of a bad value (an unknown
// model, device or precision lists the accepted ones; a cluster file that does not exist or is not a regular file;
// --nodes with --accelerators; a batch that does not split over the sizes, replicas or micro-batches).
ScenarioVariants apply_overrides(const Scenario& scenario, const Flags& flags, bool search);

}  // namespace dtsim::cli
