// Bad input files through the built binary: every file-reading path refuses a directory, a file nested too deep, a
// number beyond a double, a repeated key, a missing required key or a bad IDX label with exit 2 and one line naming
// the flag or file and the JSON path, never a crash or exit 1.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "idx_files.hpp"
#include "run_dtsim.hpp"

namespace {

using Result = dtsim::test::Run;
using dtsim::test::run_dtsim;

// Each (arguments, words) exits 2 with one line holding the words.
void check_refused(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [args, words] : cases) {
    CAPTURE(args);
    const Result r = run_dtsim(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(words));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("dtsim-bad-files-" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = (path / name).string();
    std::ofstream(file) << text;
    return file;
  }
  // `text` with its first `from` replaced by `to`, written to `name`.
  std::string variant(const std::string& name, const std::string& text, const std::string& from,
                      const std::string& to) const {
    std::string t = text;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return write(name, t);
  }
};

const std::string source = DTSIM_SOURCE_DIR;

}  // namespace

TEST_CASE("a directory given as an input file is refused up front, naming the flag or argument") {
  const std::string dir = source + "/docs";
  const std::string is_dir = dir + ": is a directory, not a file";
  check_refused({
      {"cluster " + dir, is_dir},
      {"predict " + dir, is_dir},
      {"explain " + dir, is_dir},
      {"train " + dir, is_dir},
      {"report " + dir, is_dir},
      {"collective --cluster " + dir, "--cluster: " + is_dir},
      {"predict --cluster " + dir, "--cluster: " + is_dir},
      {"collective --calibration " + dir, "--calibration: " + is_dir},
      {"compare --ranks 2 --bytes 1KB --resume " + dir, "--resume: " + is_dir},
      {"predict --resume " + dir, "--resume: " + is_dir},
      {"calibrate --network-csv " + dir, "--network-csv: " + is_dir},
      {"validate --measured " + dir + " --ranks 4", "--measured: " + is_dir},
      {"validate --repredict " + dir, "--repredict: " + is_dir},
      {"collective --calibration /dev/zero", "--calibration: /dev/zero: not a regular file"},
  });
}

TEST_CASE("a file nested 50,000 levels deep is refused by every loader with exit 2, not a stack overflow") {
  const TempDir tmp;
  const std::string deep = tmp.write("deep.json", std::string(50000, '[') + std::string(50000, ']'));
  const std::string words = deep + ": [0][0][0]";
  check_refused({
      {"cluster " + deep, words},
      {"predict " + deep, words},
      {"explain " + deep, words},
      {"train " + deep, words},
      {"report " + deep, words},
      {"collective --cluster " + deep, "--cluster: " + words},
      {"collective --calibration " + deep, "--calibration: " + words},
  });
  const Result r = run_dtsim("cluster " + deep);
  CHECK_THAT(r.output, Catch::Contains("nested deeper than 64 levels"));
  // a resume journal's line too
  const std::string journal =
      tmp.write("journal.jsonl", std::string(50000, '{') + "\n");  // a complete line, nested and unclosed
  check_refused(
      {{"compare --ranks 2 --bytes 1KB --resume " + journal, "--resume: " + journal + " line 1: not valid JSON"}});
  const std::string deep_line = tmp.write("journal2.jsonl", std::string(5000, '[') + std::string(5000, ']') + "\n");
  check_refused({{"compare --ranks 2 --bytes 1KB --resume " + deep_line, "nested deeper than 64 levels"}});
}

TEST_CASE("numbers beyond a double, repeated keys and missing required keys exit 2 naming the line or path") {
  const TempDir tmp;
  const std::string cluster = read_text(source + "/scenarios/clusters/cpu-10gbe.json");
  const std::string calibration = read_text(source + "/scenarios/calibrations/epyc-2core-2026-11-22.json");
  const std::string train = read_text(source + "/scenarios/training/fashion-mnist-sync.json");
  const std::string huge = tmp.variant("huge.json", cluster, "\"nodes\": 8", "\"nodes\": 1e400");
  const std::string twice = tmp.variant("twice.json", cluster, "\"nodes\": 8", "\"nodes\": 8, \"nodes\": 3");
  check_refused({
      {"cluster " + huge, huge + ": not valid JSON (line 5, column 14: number 1e400 is beyond a double's range"},
      {"collective --cluster " + huge, "--cluster: " + huge + ": not valid JSON (line 5"},
      {"train " + tmp.variant("t.json", train, "\"epochs\": 5", "\"epochs\": -1e400"), "number -1e400 is beyond"},
      {"cluster " + twice, twice + ": cluster.nodes: duplicate key"},
      {"train " + tmp.variant("t2.json", train, "\"workers\": 8", "\"workers\": 8, \"workers\": 2"),
       "train.workers: duplicate key"},
  });
  // keys the calibration reference calls required, though no prediction reads them
  const nlohmann::json shipped = nlohmann::json::parse(calibration);
  auto without = [&](const std::string& name, const nlohmann::json::json_pointer& object, const std::string& key) {
    nlohmann::json j = shipped;
    j[object].erase(key);
    return tmp.write(name, j.dump());
  };
  using pointer = nlohmann::json::json_pointer;
  check_refused({
      {"collective --calibration " + without("c1.json", pointer("/calibration"), "versions"),
       "calibration.versions: missing"},
      {"collective --calibration " + without("c2.json", pointer("/calibration/compute"), "gemm"),
       "calibration.compute.gemm: missing"},
      {"collective --calibration " + without("c3.json", pointer("/calibration/network"), "samples"),
       "calibration.network.samples: missing"},
      {"collective --calibration " + without("c4.json", pointer("/calibration/compute/kernel"), "residuals"),
       "calibration.compute.kernel.residuals: missing"},
  });
}

TEST_CASE("bad device files and precisions a device lacks exit 2 naming the flag or file and the JSON path") {
  const TempDir tmp;
  const std::string a100 = read_text(source + "/scenarios/devices/a100-sxm4-80gb.json");
  const std::string scenario = read_text(source + "/scenarios/training/resnet50-v100.json");
  const std::string unknown = tmp.variant("unknown.json", a100, "\"kind\"", "\"tdp\": 400, \"kind\"");
  const std::string no_fp32 = tmp.variant("no-fp32.json", a100, "\"fp32\": 19.5e12,", "");
  // the shipped file's fitted efficiency line taken out, a zero one put in
  std::string a100_unfitted = a100;
  const std::size_t efficiency_line = a100_unfitted.find("    \"efficiency\": ");
  REQUIRE(efficiency_line != std::string::npos);
  a100_unfitted.erase(efficiency_line, a100_unfitted.find('\n', efficiency_line) + 1 - efficiency_line);
  const std::string zero = tmp.variant("zero.json", a100_unfitted, "\"kind\"", "\"efficiency\": 0, \"kind\"");
  const std::string unit = tmp.variant("unit.json", a100, "\"2039GBps\"", "\"2039GB\"");
  const std::string no_source = tmp.variant("no-source.json", a100, "\"url\"", "\"link\"");
  const std::string no_memory = tmp.variant("no-memory.json", a100, "\"80GB\"", "\"0GB\"");
  const std::string accelerators = " --accelerators 1 --algorithm ring";
  check_refused({
      {"predict --device " + unknown + accelerators,
       "--device: " + unknown +
           ": device.tdp: unknown key (accepted: name, description, source, kind, peak_flops, "
           "memory, memory_bandwidth, efficiency, tensor_efficiency, half_efficiency_flops, memory_efficiency, "
           "grouped_half_channels, conv_tensor_rate, conv_tf32_rate, gemm_tf32_rate, kernel_launch, fit)"},
      {"predict --device " + no_fp32 + accelerators,
       no_fp32 + ": device.peak_flops.fp32: missing; expected a number in [1000000, 1e+19]"},
      {"explain --device " + zero + accelerators, zero + ": device.efficiency: expected a number in [1e-06, 1], got 0"},
      {"predict --device " + unit + accelerators, unit + ": device.memory_bandwidth: "},
      {"predict --device " + no_source + accelerators, no_source + ": device.source.link: unknown key"},
      // a size that must be above 0 names the same range a malformed one does
      {"predict --device " + no_memory + accelerators,
       no_memory + ": device.memory: expected a whole number of bytes in [1B, 8192TiB]"},
      {"predict " + tmp.variant("s0.json", scenario, "\"preset\": \"ddp\"", "\"preset\": \"ddp\", \"bucket\": \"0MB\""),
       "scenario.framework.bucket: expected a whole number of bytes in [1B, 8192TiB]"},
      {"predict " +
           tmp.variant("s0b.json", scenario, "\"preset\": \"ddp\"", "\"preset\": \"none\", \"overlap\": false"),
       "scenario.framework.overlap: not with preset \"none\" (one allreduce after backward)"},
      {"predict " +
           tmp.variant("s0c.json", scenario, "\"preset\": \"ddp\"", "\"preset\": \"ddp\", \"overlap\": \"no\""),
       "scenario.framework.overlap: expected true or false, got \"no\""},
      // through a scenario: the scenario's path, then the file's
      {"predict " + tmp.variant("s1.json", scenario, "\"v100\"", "\"zero.json\""),
       "scenario.device: " + zero + ": device.efficiency: expected a number in [1e-06, 1], got 0"},
      {"predict " + tmp.variant("s2.json", scenario, "\"fp32\"", "\"fp8\""),
       "scenario.precision: v100-sxm2-32gb has no fp8 math (it has fp32, fp16)"},
      {"predict " + tmp.variant("s3.json", scenario, "\"fp32\"", "\"tf32\""),
       "scenario.precision: v100-sxm2-32gb has no tf32 math (it has fp32, fp16)"},
      {"predict " + tmp.variant("s4.json", scenario, "\"v100\"", "{\"name\": \"mine\"}"),
       "scenario.device.source: missing; expected an object"},
      {"predict " + tmp.variant("s5.json", scenario, "\"v100\"", "7"),
       "scenario.device: expected a name, a path to a .json file, or an object, got 7"},
      {"predict --device v100 --precision fp8", "--precision: v100-sxm2-32gb has no fp8 math (it has fp32, fp16)"},
      // the compute model's scenario settings
      {"predict " + tmp.variant("s6.json", scenario, "\"precision\"", "\"runtime\": \"jit\", \"precision\""),
       "scenario.runtime: expected \"eager\", \"cuda_graphs\" or \"xla\", got \"jit\""},
      {"predict " +
           tmp.variant("s6b.json", scenario, "\"precision\"", "\"optimizer_loop\": \"foreach\", \"precision\""),
       "scenario.optimizer_loop: expected \"multi_tensor\" or \"per_tensor\", got \"foreach\""},
      {"predict " + tmp.variant("s7.json", scenario, "\"precision\"", "\"recompute\": true, \"precision\""),
       "scenario.recompute: expected \"none\", \"selective\", \"selective_op\" or \"full\", got true"},
      {"predict " + tmp.variant("s8.json", scenario, "\"precision\"", "\"flash_attention\": \"yes\", \"precision\""),
       "scenario.flash_attention: expected true or false, got \"yes\""},
  });
}

TEST_CASE("IDX data with labels outside the 10 classes is refused by train with exit 2 naming the file") {
  const TempDir tmp;
  const std::string data = (tmp.path / "data").string();
  std::filesystem::create_directories(data);
  dtsim::test::write_idx_images(data + "/train-images-idx3-ubyte.gz", 300);
  dtsim::test::write_idx_images(data + "/t10k-images-idx3-ubyte.gz", 20);
  dtsim::test::write_idx_labels(data + "/train-labels-idx1-ubyte.gz", std::vector<std::uint8_t>(300, 255));
  dtsim::test::write_idx_labels(data + "/t10k-labels-idx1-ubyte.gz", std::vector<std::uint8_t>(20, 1));
  const std::string train = read_text(source + "/scenarios/training/fashion-mnist-sync.json");
  const std::string run = tmp.variant("t.json", train, "\"workers\": 8", "\"workers\": 8, \"data\": \"" + data + "\"");
  check_refused({{"train " + run, data + "/train-labels-idx1-ubyte.gz: label 255 of sample 0 is not one of the 10 "
                                         "classes 0 to 9 (samples with such labels: 300 of 300)"}});
  std::vector<std::uint8_t> labels(300, 3);
  dtsim::test::write_idx_labels(data + "/train-labels-idx1-ubyte.gz", labels);
  labels.assign(20, 4);
  labels[7] = 200;  // one label 200 in the test set
  dtsim::test::write_idx_labels(data + "/t10k-labels-idx1-ubyte.gz", labels);
  check_refused({{"train " + run, data + "/t10k-labels-idx1-ubyte.gz: label 200 of sample 7"}});
  // with good labels the same files train (no exception inside SimGrid, no refusal)
  labels[7] = 4;
  dtsim::test::write_idx_labels(data + "/t10k-labels-idx1-ubyte.gz", labels);
  const Result ok = run_dtsim("train " + tmp.variant("t2.json", read_text(run), "\"epochs\": 5", "\"epochs\": 1"));
  CHECK(ok.exit_code == 0);
}

TEST_CASE("a training run too large to hold or to finish is refused before any model is built, with the estimate") {
  const TempDir tmp;
  const std::string train = read_text(source + "/scenarios/training/fashion-mnist-sync.json");
  // 4.3 billion parameters: each of 8 workers' replica, gradient and momentum alone are about 17 GB
  const std::string huge =
      tmp.variant("huge.json", train, "\"workers\": 8", "\"workers\": 8, \"layers\": [784, 65536, 65536, 10]");
  const Result refused = run_dtsim("train " + huge);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output,
             Catch::Contains("the MLP [784, 65536, 65536, 10] (4.35 billion parameters) with 8 workers"));
  CHECK_THAT(refused.output, Catch::Contains("--force to run it anyway"));
  CHECK(std::count(refused.output.begin(), refused.output.end(), '\n') == 1);
  // compute alone: a model that fits in memory but whose epochs take hours at the rate this machine's kernel reaches
  const std::string one_worker = read_text(tmp.variant("one.json", train, "\"workers\": 8", "\"workers\": 1"));
  const std::string slow =
      tmp.variant("slow.json", one_worker, "\"epochs\": 5", "\"epochs\": 1000, \"layers\": [784, 4096, 4096, 10]");
  const Result too_long = run_dtsim("train " + slow);
  CHECK(too_long.exit_code == 2);
  CHECK_THAT(too_long.output, Catch::Contains(" GFLOP/s this machine's kernel reaches on it"));
  CHECK_THAT(too_long.output, Catch::Contains("above the 3600 s limit"));
  // 5.9e14 FLOPs: 590 s at 1 TFLOP/s, which the estimate assumed until session 52 (and so let it run for hours);
  // one core's kernel reaches tens of GFLOP/s on it, so about 2 to 7 hours, refused
  const Result many_epochs = run_dtsim(
      "train " + tmp.variant("epochs.json", train, "\"epochs\": 5", "\"epochs\": 1000, \"layers\": [784, 2048, 10]"));
  CHECK(many_epochs.exit_code == 2);
  CHECK_THAT(many_epochs.output, Catch::Contains("train.layers, train.epochs: the MLP [784, 2048, 10]"));
}

TEST_CASE("bad model descriptions exit 2 naming the JSON path and what is accepted, inline models predict") {
  const TempDir tmp;
  const std::string scenario = read_text(source + "/scenarios/training/inline-llama-1b-dgx-h100.json");
  auto inline_variant = [&](const std::string& name, const std::string& from, const std::string& to) {
    return tmp.variant(name, scenario, from, to);
  };
  check_refused({
      {"predict " + inline_variant("s1.json", "\"heads\": 32", "\"heads\": 30"),
       "scenario.model.heads: expected a divisor of hidden = 2048 (or give head_dim), got 30"},
      {"predict " + inline_variant("s2.json", "\"kv_heads\": 8", "\"kv_heads\": 5"),
       "scenario.model.kv_heads: expected a divisor of heads = 32 (each key/value head serves a group of query "
       "heads), got 5"},
      {"predict " + inline_variant("s3.json", "\"biases\": false",
                                   "\"biases\": false, \"moe\": {\"experts\": 8, "
                                   "\"top_k\": 9}"),
       "scenario.model.moe.top_k: expected at most experts = 8, got 9"},
      {"predict " + inline_variant("s3b.json", "\"biases\": false",
                                   "\"biases\": false, \"moe\": {\"experts\": 8, "
                                   "\"top_k\": 2, \"capacity_factor\": 0}"),
       "scenario.model.moe.capacity_factor: expected a number in [0.05, 16], got 0"},
      {"predict " + inline_variant("s4.json", "\"hidden\": 2048", "\"hiden\": 2048"),
       "scenario.model.hiden: unknown key (accepted: name, source, kind, architecture, layers, hidden"},
      {"predict " + inline_variant("s5.json", "\"ffn_hidden\": 8192,", ""),
       "scenario.model.ffn_hidden: missing; expected a whole number in [1, 16777216]"},
      {"predict " + inline_variant("s6.json", "\"tied_embeddings\": true", "\"tied_embeddings\": \"yes\""),
       "scenario.model.tied_embeddings: expected true or false, got \"yes\""},
      {"predict " + inline_variant("s7.json", "\"layers\": 16", "\"layers\": 0"),
       "scenario.model.layers: expected a whole number in [1, 4096], got 0"},
      {"predict " + inline_variant("s8.json", "\"kind\": \"transformer\"", "\"kind\": \"cnn\""),
       "scenario.model.kind: expected \"transformer\" or \"layers\", got \"cnn\""},
      {"predict " + inline_variant("s9.json", "\"ffn\": \"swiglu\"", "\"ffn\": \"tanh\""),
       "scenario.model.ffn: expected \"gelu\", \"relu\" or \"swiglu\", got \"tanh\""},
      {"predict " +
           inline_variant("s10.json", "\"vocab\": 128256,", "\"patches\": {\"image_size\": 224, \"patch_size\": 15},"),
       "scenario.model.patches.patch_size: expected a divisor of image_size = 224, got 15"},
      // 2^32 patches: they had wrapped round to 1 token in 32 bits and the model simulated, exit 0
      {"predict " + inline_variant("s-patches.json", "\"vocab\": 128256,",
                                   "\"patches\": {\"image_size\": 65536, \"patch_size\": 1},"),
       "scenario.model.patches.patch_size: (image_size / patch_size)^2 patches must be at most 16777216 tokens, as a "
       "sequence; image_size 65536 and patch_size 1 make 4294967297"},
      {"predict " + inline_variant("s12.json", "\"position\": \"rope\"", "\"position\": \"rope\", \"positions\": 9"),
       "scenario.model.positions: only with position \"learned\""},
      // Transformer-XL's fields: the adaptive softmax's clusters and the memory
      {"predict " + inline_variant("s13.json", "\"position\": \"rope\"",
                                   "\"position\": \"relative\", \"adaptive\": {\"cutoffs\": [20000, 10000]}"),
       "scenario.model.adaptive.cutoffs: expected increasing values each below vocab = 128256, got 10000 after 20000"},
      {"predict " + inline_variant("s14.json", "\"position\": \"rope\"",
                                   "\"position\": \"rope\", \"adaptive\": {\"cutoffs\": [200000]}"),
       "scenario.model.adaptive.cutoffs: expected increasing values each below vocab = 128256, got 200000 after 0"},
      {"predict " + inline_variant("s15.json", "\"position\": \"rope\"",
                                   "\"position\": \"rope\", \"adaptive\": {\"cutoffs\": [20000], \"div_val\": 0}"),
       "scenario.model.adaptive.div_val: expected a whole number in [1, 65536], got 0"},
      {"predict " + inline_variant("s16.json", "\"position\": \"rope\"", "\"position\": \"rope\", \"memory\": -1"),
       "scenario.model.memory: expected a whole number in [0, 16777216], got -1"},
  });
  // model files, by --model and by a scenario's path (relative to the scenario)
  const std::string layers =
      tmp.write("cnn.json", R"({"model": {"name": "cnn", "kind": "layers", "input": [3, 32, 32], "layers": [
          {"kind": "conv", "name": "c1", "out": 16, "kernel": [3], "padding": [1], "batch_norm": true},
          {"kind": "pool", "name": "p1", "kernel": [2], "stride": 2},
          {"kind": "linear", "name": "fc", "from": "c9", "out": 10}]}})");
  const std::string pool_out =
      tmp.write("pool-out.json", R"({"model": {"name": "cnn", "kind": "layers", "input": [3, 32, 32], "layers": [
          {"kind": "pool", "out": 4, "kernel": [2]}]}})");
  const std::string big_kernel =
      tmp.write("big.json", R"({"model": {"name": "cnn", "kind": "layers", "input": [3, 4, 4], "layers": [
          {"kind": "conv", "out": 4, "kernel": [7]}]}})");
  // a custom layer's FLOPs so large that a step would take forever (infinite in a simulator's clock)
  const std::string huge_flops =
      tmp.write("huge-flops.json", R"({"model": {"name": "cnn", "kind": "layers", "input": [8], "layers": [
          {"kind": "custom", "params": 1, "forward_flops": 1e308, "activation_bytes": 1000}]}})");
  const std::string text = tmp.write("text.json", R"({"model": "resnet50"})");
  const std::string cluster_scenario = read_text(source + "/scenarios/training/resnet50-v100.json");
  check_refused({
      {"predict --model " + layers, "--model: " + layers + ": model.layers[2].from: no earlier layer is named 'c9'"},
      {"explain --model resnet50," + pool_out, "--model: " + pool_out + ": model.layers[0].out: not for a pool layer"},
      {"predict --model " + big_kernel,
       big_kernel + ": model.layers[0].kernel: a 7x7 kernel is larger than its padded input 3x4x4"},
      {"predict --model " + text, text + ": model: expected an object, got \"resnet50\""},
      {"predict --model " + huge_flops + " --accelerators 1,2",
       huge_flops + ": model.layers[0].forward_flops: expected a number in [0, 1e+18], got 1e+308"},
      {"predict " + tmp.variant("s11.json", cluster_scenario, "\"resnet50\"", "7"),
       "scenario.model: expected a name, a path to a .json file, or an object, got 7"},
      {"predict --model " + tmp.path.string() + "/none.json", "--model: " + tmp.path.string() + "/none.json: cannot"},
      {"predict " + tmp.variant("s13.json", cluster_scenario, "\"resnet50\"", "\"cnn-missing.json\""),
       "scenario.model: " + (tmp.path / "cnn-missing.json").string() + ": cannot read the file"},
  });
  // an inline transformer and a model file named by path relative to the scenario both predict
  const Result ok = run_dtsim("predict " + source + "/scenarios/training/inline-llama-1b-dgx-h100.json --json");
  REQUIRE(ok.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(ok.output);
  CHECK(j.dump().find("llama-style-1b") != std::string::npos);
  const std::string good_cnn =
      tmp.write("good-cnn.json", R"({"model": {"name": "tiny-cnn", "kind": "layers", "input": [3, 32, 32], "layers": [
          {"kind": "conv", "name": "c1", "out": 16, "kernel": [3], "padding": [1], "batch_norm": true},
          {"kind": "pool", "name": "p1", "kernel": [2], "stride": 2},
          {"kind": "linear", "name": "fc", "out": 10}]}})");
  const Result by_path =
      run_dtsim("predict " + tmp.variant("s14.json", cluster_scenario, "\"resnet50\"", "\"good-cnn.json\"") +
                " --accelerators 1");
  CHECK(by_path.exit_code == 0);
  CHECK_THAT(by_path.output, Catch::Contains("tiny-cnn ("));
}

TEST_CASE("a predict sweep too long to finish is refused before its first configuration, with its estimate") {
  const TempDir tmp;
  const std::string scenario = read_text(source + "/scenarios/training/resnet50-v100.json");
  std::string sizes;  // 1 to 100,000 accelerators: 99,999 configurations, 10^10 accelerators in all
  for (int a = 1; a <= 100000; ++a)
    sizes += (a > 1 ? ", " : "") + std::to_string(a);
  const std::string many = tmp.variant("many.json", scenario, "[1, 2, 4, 8, 16, 32, 64]", "[" + sizes + "]");
  const Result refused = run_dtsim("predict " + many + " --algorithm ring");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Catch::Contains("scenario.accelerators: 99999 configurations (sizes x algorithms) take "
                                             "at least 2.806 h (1 ms a configuration and 2 us an accelerator"));
  CHECK_THAT(refused.output, Catch::Contains("or --force to run them anyway"));
  CHECK(std::count(refused.output.begin(), refused.output.end(), '\n') == 1);
  // two batch sizes are two variants of every configuration
  const Result variants = run_dtsim("predict " + many + " --algorithm ring --batch 16,32");
  CHECK(variants.exit_code == 2);
  CHECK_THAT(variants.output, Catch::Contains(": 199998 configurations (sizes x algorithms x variants) take at least "
                                              "5.611 h"));
}

TEST_CASE("a cluster too large to build or to analyse is refused before the work, with its estimate") {
  const TempDir tmp;
  const std::string cluster = read_text(source + "/scenarios/clusters/v100-nvlink-edr.json");
  // a link between every pair of 1024 accelerators a node: 523,776 links a node, refused before any is built
  const std::string mesh = tmp.variant("mesh.json", cluster, "\"accelerators\": 4", "\"accelerators\": 1024");
  const Result links = run_dtsim("cluster " + mesh + " --nodes 4096 --no-bisection");
  CHECK(links.exit_code == 2);
  CHECK_THAT(links.output, Catch::Contains("--nodes 4096: cluster.node.intra: kind nvlink links every pair"));
  CHECK_THAT(links.output, Catch::Contains("2145386496 links"));
  CHECK(std::count(links.output.begin(), links.output.end(), '\n') == 1);
  // the diameter and bisection of 131,072 accelerators: refused with the time they would take; without them it builds
  const Result analysis = run_dtsim("cluster " + source + "/scenarios/clusters/dgx-h100.json --nodes 16384");
  CHECK(analysis.exit_code == 2);
  CHECK_THAT(analysis.output, Catch::Contains("the diameter and bisection of 131072 accelerators would take about"));
  CHECK_THAT(analysis.output, Catch::Contains("--no-bisection"));
  CHECK(run_dtsim("cluster " + source + "/scenarios/clusters/dgx-h100.json --nodes 16384 --no-bisection").exit_code ==
        0);
}

TEST_CASE("fields a cluster or model would ignore or could not use are refused: a star's link, empty names") {
  const TempDir tmp;
  const std::string cluster = read_text(source + "/scenarios/clusters/v100-nvlink-edr.json");
  const auto refused = [](const std::string& command, const std::string& what) {
    CAPTURE(command);
    const Result r = run_dtsim(command);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(what));
  };
  nlohmann::json star = nlohmann::json::parse(cluster);
  star["cluster"]["fabric"] = {{"kind", "star"}, {"link", {{"bandwidth", "1Gbps"}}}};
  refused("cluster " + tmp.write("star.json", star.dump()),
          "cluster.fabric.link: only for fabrics with switch-to-switch");
  star["cluster"]["fabric"].erase("link");
  CHECK(run_dtsim("cluster " + tmp.write("star2.json", star.dump())).exit_code == 0);
  nlohmann::json nameless = nlohmann::json::parse(cluster);
  nameless["cluster"]["node"]["accelerator"] = "";
  refused("cluster " + tmp.write("nameless.json", nameless.dump()),
          "cluster.node.accelerator: expected a non-empty string");
  nlohmann::json model = nlohmann::json::parse(read_text(source + "/scenarios/models/llama-3-8b.json"));
  model["model"]["name"] = "";
  refused("predict --model " + tmp.write("m.json", model.dump()), "model.name: expected a non-empty string");
  nlohmann::json mlp = nlohmann::json::parse(read_text(source + "/scenarios/models/mlp-784-95-10.json"));
  mlp["model"]["layers"][0]["name"] = "a,b";
  refused("predict --model " + tmp.write("mlp.json", mlp.dump()), "expected a non-empty name without commas");
}

TEST_CASE(
    "a scenario's values that flags replace are checked after the flags: valid commands run, the file alone not") {
  const TempDir tmp;
  nlohmann::json layout = nlohmann::json::parse(read_text(source + "/scenarios/training/gpt2-xl-3d.json"));
  layout["scenario"]["accelerators"] = {1, 8};
  layout["scenario"]["parallel"] = {{"tensor", 2}};
  const std::string sizes = tmp.write("sizes.json", layout.dump());
  CHECK(run_dtsim("predict " + sizes + " --accelerators 2,8").exit_code == 0);
  const Result alone = run_dtsim("predict " + sizes);
  CHECK(alone.exit_code == 2);
  CHECK_THAT(alone.output, Catch::Contains("scenario.accelerators: 1 is not a multiple of tensor x pipeline = 2"));
  nlohmann::json bf16 = nlohmann::json::parse(read_text(source + "/scenarios/training/resnet50-v100.json"));
  bf16["scenario"]["precision"] = "bf16";
  const std::string precision = tmp.write("bf16.json", bf16.dump());
  CHECK(run_dtsim("predict " + precision + " --device a100 --accelerators 1").exit_code == 0);
  CHECK(run_dtsim("explain " + precision + " --precision fp32 --accelerators 1,2").exit_code == 0);
  const Result v100 = run_dtsim("predict " + precision);
  CHECK(v100.exit_code == 2);
  CHECK_THAT(v100.output, Catch::Contains("scenario.precision: v100-sxm2-32gb has no bf16 math"));
}

TEST_CASE("a scenario whose buckets wait for backward says so in predict's header and JSON and in explain's why") {
  const TempDir tmp;
  const std::string scenario = read_text(source + "/scenarios/training/resnet50-v100.json");
  const std::string waiting =
      tmp.variant("waiting.json", scenario, "\"preset\": \"ddp\"", "\"preset\": \"ddp\", \"overlap\": false");
  const Result text = run_dtsim("predict " + waiting + " --accelerators 1,16 --algorithm ring");
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.output, Catch::Contains("ddp (26.21 MB buckets, started after backward)"));
  const Result json = run_dtsim("predict " + waiting + " --accelerators 1,16 --algorithm ring --json");
  REQUIRE(json.exit_code == 0);
  const auto doc = nlohmann::json::parse(json.output);
  CHECK(doc["overlap"] == false);
  CHECK(nlohmann::json::parse(run_dtsim("predict --accelerators 1,16 --algorithm ring --json").output)["overlap"] ==
        true);
  const Result why = run_dtsim("explain " + waiting + " --accelerators 1,16 --algorithm ring");
  REQUIRE(why.exit_code == 0);
  CHECK_THAT(why.output, Catch::Contains("none starts before backward ends (framework.overlap false"));
  CHECK_THAT(why.output, Catch::Contains("a larger batch hides none of it"));
}
