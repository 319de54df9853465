// The published measurements (validation/published/measurements.csv): every row parses and has a source, the fit and
// test splits are disjoint and each holds rows, and bad tables are refused naming the line and column.
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "models/heldout_errors.hpp"
#include "scenarios/collective_table.hpp"
#include "scenarios/heldout_file.hpp"
#include "scenarios/input_rates_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/published_file.hpp"
#include "validation/published_cv.hpp"
#include "validation/published_fit.hpp"

using namespace dtsim;

namespace {

const std::string table = std::string(DTSIM_SOURCE_DIR) + "/validation/published/measurements.csv";

std::string write_table(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("dtsim-published-" + std::to_string(::getpid()) + name);
  std::ofstream(path) << text;
  return path.string();
}

std::string header() {
  std::string h;
  for (const std::string& c : published_columns())
    h += (h.empty() ? "" : ",") + c;
  return h + "\n";
}

}  // namespace

TEST_CASE("the published table parses, every row has a source, and fit and test rows are disjoint") {
  const std::vector<PublishedRow> rows = load_published_table(table);
  CHECK(rows.size() >= 80);
  std::set<std::string> devices, models, fit, test;
  int multi = 0;
  for (const PublishedRow& r : rows) {
    devices.insert(r.device);
    models.insert(r.model);
    (r.split == "fit" ? fit : test).insert(r.id);
    CHECK(r.source_url.starts_with("https://"));
    CHECK_FALSE(r.source_locator.empty());
    multi += r.device_count > 1 ? 1 : 0;
  }
  CHECK(devices.size() >= 6);
  CHECK(models.size() >= 5);
  CHECK(fit.size() >= 80);
  CHECK(test.size() >= 80);
  CHECK(multi >= 40);
  for (const std::string& id : test)
    CHECK(fit.count(id) == 0);
  // every convolutional network's row says how its tensors were laid out (sources.md says where each source states it)
  int convolutional = 0;
  for (const PublishedRow& r : rows) {
    std::string m = r.model;
    std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (m.find("resne") == std::string::npos && m.find("vgg") == std::string::npos &&
        m.find("efficientnet") == std::string::npos && m.find("convnext") == std::string::npos)
      continue;
    ++convolutional;
    CAPTURE(r.id);
    CHECK((r.memory_format == "nchw" || r.memory_format == "nhwc"));
  }
  CHECK(convolutional >= 100);
  // the sources that state gradient accumulation (NVIDIA's BERT pre-training tables): their rows carry it, and where
  // a table gives a fixed global batch the accumulation is global / (micro-batch x devices) (DGX-1 16 GB phase 1:
  // 65536)
  int accumulated = 0;
  for (const PublishedRow& r : rows) {
    if (r.model.find("pre-training") == std::string::npos ||
        r.source_url.find("NVIDIA/DeepLearningExamples") == std::string::npos)
      continue;
    CAPTURE(r.id);
    if (r.id.starts_with("dle-tf-bertl-pre128-v100-16-")) {
      CHECK(static_cast<long long>(r.accumulation) * r.batch_per_device * r.device_count == 65536);
    }
    accumulated += r.accumulation > 1 ? 1 : 0;
  }
  CHECK(accumulated >= 100);
}

TEST_CASE("a bad published table is refused naming the line and the column") {
  const std::string good_row =
      "r1,v100,1,1,none,PyTorch,20.06,resnet50,amp,256,,nhwc,,,,,1000,images/s total,https://example.org/t,table "
      "1,,fit\n";
  CHECK_NOTHROW(load_published_table(write_table("ok.csv", header() + good_row)));
  CHECK_THROWS_WITH(load_published_table(write_table(
                        "nosource.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,resnet50,amp,256,,,,,,,1000,"
                                                   "images/s total,,table 1,,fit\n")),
                    Catch::Contains("nosource.csv:2 (source_url): every row needs its source's URL"));
  CHECK_THROWS_WITH(load_published_table(write_table("split.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,resnet50,"
                                                                             "amp,256,,,,,,,1000,images/s total,"
                                                                             "https://e.org,t,,both\n")),
                    Catch::Contains("split.csv:2 (split): expected fit or test, got 'both'"));
  CHECK_THROWS_WITH(load_published_table(write_table("twice.csv", header() + good_row + good_row)),
                    Catch::Contains("twice.csv:3 (id): 'r1' is already a row's id"));
  CHECK_THROWS_WITH(load_published_table(write_table("header.csv", "id,device\n" + good_row)),
                    Catch::Contains("header.csv:1: the header must be id,device,device_count"));
  CHECK_THROWS_WITH(load_published_table(write_table("quote.csv", header() + "\"r1,v100\n")),
                    Catch::Contains("quote.csv:2: a quoted field is not closed"));
  CHECK_THROWS_WITH(load_published_table(write_table("number.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,resnet50,"
                                                                              "amp,256,,,,,,,-5,images/s total,"
                                                                              "https://e.org,t,,fit\n")),
                    Catch::Contains("number.csv:2 (throughput): expected a positive number, got '-5'"));
  CHECK_THROWS_WITH(load_published_table(write_table("layout.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,resnet50,"
                                                                              "amp,256,,NHWC,,,,,1000,images/s total,"
                                                                              "https://e.org,t,,fit\n")),
                    Catch::Contains("layout.csv:2 (memory_format): expected nchw, nhwc or nothing, got 'NHWC'"));
  CHECK_THROWS_WITH(
      load_published_table(write_table("accumulation.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,bert,amp,"
                                                                      "8,128,,0,,,,1000,sequences/s total,"
                                                                      "https://e.org,t,,fit\n")),
      Catch::Contains("accumulation.csv:2 (accumulation)"));
  const auto with_layout = [](const std::string& layout, const std::string& recompute, const std::string& compiled) {
    return "r1,h100,16,2,none,torchtitan,1,llama 3 8b,bf16,2,8192,,," + layout + "," + recompute + "," + compiled +
           ",5000,tokens/s per device,https://e.org,t,,fit\n";
  };
  const std::vector<PublishedRow> laid =
      load_published_table(write_table("laid.csv", header() + with_layout("fsdp=2 tp=8", "selective_op", "yes")));
  REQUIRE(laid.size() == 1);
  CHECK(laid[0].layout.given);
  CHECK(laid[0].layout.fsdp == 2);
  CHECK(laid[0].layout.tensor == 8);
  CHECK(laid[0].recompute == "selective_op");
  CHECK(load_published_table(write_table("hsdp.csv", header() + with_layout("hsdp=8", "", "")))[0].layout.hsdp == 8);
  CHECK_THROWS_WITH(load_published_table(write_table("sum.csv", header() + with_layout("fsdp=4 tp=8", "", ""))),
                    Catch::Contains("sum.csv:2 (layout): 'fsdp=4 tp=8' lays out 32 devices, the row has 16"));
  CHECK_THROWS_WITH(load_published_table(write_table("word.csv", header() + with_layout("fsdp=16 zero", "", ""))),
                    Catch::Contains("word.csv:2 (layout): expected fsdp=N, hsdp=N, tp=N, pp=N, cp=N, micro=N"));
  CHECK_THROWS_WITH(load_published_table(write_table("zero.csv", header() + with_layout("fsdp=0", "", ""))),
                    Catch::Contains("zero.csv:2 (layout): expected a whole number from 1 in 'fsdp=0'"));
  CHECK_THROWS_WITH(load_published_table(write_table("ac.csv", header() + with_layout("fsdp=16", "some", ""))),
                    Catch::Contains("ac.csv:2 (recompute): expected none, selective, selective_op"));
  CHECK_THROWS_WITH(load_published_table(write_table("compiled.csv", header() + with_layout("fsdp=16", "", "maybe"))),
                    Catch::Contains("compiled.csv:2 (compiled): expected yes, no or nothing, got 'maybe'"));
}

TEST_CASE("the published collective measurements: sources, both splits on every system, nccl-tests' own arithmetic") {
  const std::string path = std::string(DTSIM_SOURCE_DIR) + "/validation/published/collectives.csv";
  const std::vector<CollectiveMeasurement> rows = load_collective_table(path);
  CHECK(rows.size() >= 40);
  std::ifstream sources_file(std::string(DTSIM_SOURCE_DIR) + "/validation/published/collectives-sources.md");
  const std::string sources((std::istreambuf_iterator<char>(sources_file)), std::istreambuf_iterator<char>());
  std::set<std::string> systems, fit_systems, test_systems;
  std::uint64_t smallest = ~std::uint64_t{0}, largest = 0;
  for (const CollectiveMeasurement& r : rows) {
    CAPTURE(r.id);
    systems.insert(r.system);
    (r.split == "fit" ? fit_systems : test_systems).insert(r.system);
    smallest = std::min(smallest, r.size_bytes);
    largest = std::max(largest, r.size_bytes);
    // reserved: no nccl-tests run on H200 (issue 26)
    CHECK(r.system.find("H200") == std::string::npos);
    CHECK(r.note.find("H200") == std::string::npos);
    // every row's source is described: its GitHub repository (owner/name) or its whole URL
    const std::string github = "https://github.com/";
    std::string key = r.source_url;
    if (key.starts_with(github)) {
      const std::size_t owner_end = key.find('/', github.size());
      const std::size_t repo_end = owner_end == std::string::npos ? owner_end : key.find('/', owner_end + 1);
      key = key.substr(github.size(), repo_end == std::string::npos ? std::string::npos : repo_end - github.size());
    }
    CHECK(sources.find(key) != std::string::npos);
    // nccl-tests prints algbw = size / time and busbw = algbw x the collective's factor, each to two decimals
    if (r.algbw_GBps > 0 && r.time_us > 0) {
      const double algbw = static_cast<double>(r.size_bytes) / (r.time_us * 1e3);
      CHECK(std::abs(algbw - r.algbw_GBps) <= 0.03 * r.algbw_GBps + 0.01);
    }
    if (r.algbw_GBps > 0 && r.busbw_GBps > 0) {
      CHECK(std::abs(r.algbw_GBps * bus_factor(r.collective, r.gpus) - r.busbw_GBps) <= 0.02 * r.busbw_GBps + 0.01);
    }
  }
  CHECK(systems.size() >= 4);
  CHECK(test_systems.size() >= 8);  // (systems of one row sit in the fit split only)
  CHECK(fit_systems.size() == systems.size());
  CHECK(smallest <= 8192);
  CHECK(largest >= (std::uint64_t{1} << 30));
  const std::string good = "a,sys,8,1,8,nvswitch,allreduce,1024,,1.5,,NCCL,2.18,https://example.org/t,table 1,fit\n";
  std::string header;
  for (const std::string& c : collective_table_columns())
    header += (header.empty() ? "" : ",") + c;
  header += "\n";
  CHECK_NOTHROW(load_collective_table(write_table("c-ok.csv", header + good)));
  CHECK_THROWS_WITH(load_collective_table(
                        write_table("c-gpus.csv", header + "a,sys,9,1,8,x,allreduce,1024,,1.5,,NCCL,2,https://e.org,"
                                                           "t,fit\n")),
                    Catch::Contains("c-gpus.csv:2 (gpus): 9 is not nodes x gpus_per_node (8)"));
  CHECK_THROWS_WITH(
      load_collective_table(write_table("c-none.csv", header + "a,sys,8,1,8,x,allreduce,1024,,,,NCCL,2,https://e.org,"
                                                               "t,fit\n")),
      Catch::Contains("c-none.csv:2 (algbw_GBps): a row needs a measured algbw_GBps, busbw_GBps or time_us"));
  CHECK_THROWS_WITH(
      load_collective_table(write_table("c-kind.csv", header + "a,sys,8,1,8,x,gossip,1024,,1.5,,NCCL,2,https://e.org,"
                                                               "t,fit\n")),
      Catch::Contains("c-kind.csv:2 (collective): expected allreduce, allgather"));
}

TEST_CASE("a held-out error band: percentiles of the signed errors, and the range of measurements they give") {
  const ErrorBand b = error_band({0.1, -0.2, 0.3, 0.0, -0.1}, {8, 1, 64, 8, 1});
  CHECK(b.rows == 5);
  CHECK(b.median_abs_error == Approx(0.1));
  CHECK(b.p10_error == Approx(-0.16));  // between -0.2 and -0.1, 40% of the way
  CHECK(b.p90_error == Approx(0.22));   // between 0.1 and 0.3, 60% of the way
  CHECK(b.min_devices == 1);
  CHECK(b.max_devices == 64);
  // dtsim too fast by 22% at the 90th percentile: the run measures 1 / 1.22 of the prediction
  CHECK(b.low(100.0) == Approx(100.0 / 1.22));
  CHECK(b.high(100.0) == Approx(100.0 / 0.84));
  CHECK(b.low(100.0) < b.high(100.0));
  CHECK(error_band({}, {}).rows == 0);
  CHECK_THROWS_AS(error_band({0.1}, {}), std::invalid_argument);
}

TEST_CASE("the held-out error file reads back what it wrote, and a bad one is refused naming the JSON path") {
  HeldoutErrors e;
  e.generated_by = "a test";
  e.training = error_band({0.1, -0.2, 0.3}, {1, 2, 4}, {"resnet50", "bert-large", "resnet50"});
  CHECK(e.training.models == std::vector<std::string>{"bert-large", "resnet50"});  // each once, sorted
  e.by_device = {{"a100-sxm4-80gb", error_band({0.1, 0.05}, {1, 8})}, {"v100-sxm2-16gb", error_band({-0.3}, {16})}};
  e.pooled_devices = error_band({}, {});
  e.speedup = error_band({0.02, -0.05}, {8, 32});
  e.collectives = error_band({0.5, -0.1}, {8, 16});
  e.collectives_by_size = {{">= 1 MiB", error_band({0.5}, {8})}, {"< 8 KiB", error_band({-0.1}, {16})}};
  const nlohmann::json doc = heldout_json(e);
  CHECK(parse_heldout(doc) == e);
  CHECK(parse_heldout(doc).device("a100-sxm4-80gb", 2) != nullptr);
  CHECK(parse_heldout(doc).device("a100-sxm4-80gb", 3) == nullptr);  // too few runs of the part for its own band
  CHECK(parse_heldout(doc).device("h100-sxm5-80gb", 1) == nullptr);
  auto refused = [&](const std::function<void(nlohmann::json&)>& change, const std::string& says) {
    nlohmann::json bad = doc;
    change(bad);
    CAPTURE(says);
    CHECK_THROWS_WITH(parse_heldout(bad), Catch::Contains(says));
  };
  refused([](nlohmann::json& d) { d["heldout"]["training"]["extra"] = 1; }, "heldout.training");
  refused([](nlohmann::json& d) { d["heldout"]["training"]["p10_error"] = 0.5; }, "heldout.training.p10_error");
  refused([](nlohmann::json& d) { d["heldout"]["split"] = "fit"; }, "heldout.split");
  refused([](nlohmann::json& d) { d["heldout"]["collectives"].erase("rows"); }, "heldout.collectives");
  refused([](nlohmann::json& d) { d["heldout"]["by_device"][1]["device"] = "a100-sxm4-80gb"; }, "listed twice");
  refused([](nlohmann::json& d) { d["heldout"]["training"]["p90_error"] = -2; }, "heldout.training.p90_error");
  refused(
      [](nlohmann::json& d) {
        d["heldout"]["training"]["models"] = {"resnet50", 3};
      },
      "heldout.training.models[1]: expected a model name");
  CHECK_THROWS_AS(error_band({0.1}, {1}, {"a", "b"}), std::invalid_argument);
  refused([](nlohmann::json& d) { d["heldout"]["collectives_by_size"][0]["size"] = "4 MiB"; },
          "heldout.collectives_by_size[0].size");
  refused([](nlohmann::json& d) { d["heldout"]["collectives_by_size"][1]["size"] = ">= 1 MiB"; }, "listed twice");
  CHECK(std::string(collective_size_class(8191)) == "< 8 KiB");
  CHECK(std::string(collective_size_class(8192)) == "8 KiB to 1 MiB");
  CHECK(std::string(collective_size_class(1 << 20)) == ">= 1 MiB");
}

TEST_CASE("cross-validation predicts every fit row once, by a fit that did not see it, and never touches test rows") {
  // a small table: the fit rows of ResNet-50 in NVIDIA's PyTorch tables (fast to fit), and one test row
  std::vector<PublishedRow> rows;
  int test_rows = 0;
  for (const PublishedRow& r : load_published_table(table)) {
    if (r.id.starts_with("dle-pt-rn50-") && r.split == "fit") rows.push_back(r);
    if (r.id.starts_with("dle-pt-rn50-") && r.split == "test" && test_rows++ == 0) rows.push_back(r);
  }
  REQUIRE(rows.size() >= 6);
  PublishedFitOptions options;
  options.sweeps = 1;
  const std::vector<std::string> devices{"v100-sxm2-16gb", "v100-sxm2-32gb", "a100-sxm4-80gb"};
  const CrossValidation cv = cross_validate_published(rows, devices, default_published_mapping(DTSIM_SOURCE_DIR),
                                                      DTSIM_SOURCE_DIR, options, 3);
  std::set<std::string> seen;
  for (const PublishedCase& c : cv.out_of_fold.cases) {
    CHECK(c.row.split == "fit");
    CHECK(seen.insert(c.row.id).second);  // once
  }
  CHECK(seen.size() == rows.size() - 1);  // every fit row (all predictable), not the test row
  CHECK(cv.out_of_fold.overall.rows == static_cast<int>(seen.size()));
  CHECK(cv.out_of_fold.overall.median_abs_error > 0);
  // the folds: a hash of the id, stable across runs and machines
  CHECK(published_fold("dle-pt-rn50-a100-80-tf32-b256-g1", 6) == published_fold("dle-pt-rn50-a100-80-tf32-b256-g1", 6));
  CHECK(published_fold("a", 6) == 4);  // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c
  CHECK(published_fold("a", 7) == static_cast<int>(0xaf63dc4c8601ec8cULL % 7));
  // a fold that leaves nothing to fit is an error, not a silent pooled guess
  const auto fit_row = std::find_if(rows.begin(), rows.end(), [](const PublishedRow& r) { return r.split == "fit"; });
  CHECK_THROWS_WITH(cross_validate_published({*fit_row}, devices, default_published_mapping(DTSIM_SOURCE_DIR),
                                             DTSIM_SOURCE_DIR, options, 2),
                    Catch::Contains("no fit row"));
  CHECK_THROWS_AS(cross_validate_published(rows, devices, default_published_mapping(DTSIM_SOURCE_DIR), DTSIM_SOURCE_DIR,
                                           options, 1),
                  std::invalid_argument);
}

TEST_CASE("the input pipelines' rates file reads back what it wrote, and a bad one is refused naming the JSON path") {
  const PublishedInputRates rates{"a test", 219.3, 194.7, 23, 14};
  const nlohmann::json doc = input_rates_json(rates);
  const PublishedInputRates back = parse_input_rates(doc);
  CHECK(back.generated_by == "a test");
  CHECK(back.decode_per_core == 219.3);
  CHECK(back.decode_per_core_autoaugment == 194.7);
  CHECK(back.rows == 23);
  CHECK(back.autoaugment_rows == 14);
  auto refused = [&](const std::function<void(nlohmann::json&)>& change, const std::string& says) {
    nlohmann::json bad = doc;
    change(bad);
    CAPTURE(says);
    CHECK_THROWS_WITH(parse_input_rates(bad), Catch::Contains(says));
  };
  refused([](nlohmann::json& d) { d["input_rates"]["extra"] = 1; }, "input_rates");
  refused([](nlohmann::json& d) { d["input_rates"]["decode_per_core"] = 5; }, "input_rates.decode_per_core");
  refused([](nlohmann::json& d) { d["input_rates"].erase("decode_per_core_autoaugment"); },
          "input_rates.decode_per_core_autoaugment");
  refused([](nlohmann::json& d) { d["input_rates"]["rows"] = -1; }, "input_rates.rows");
  refused([](nlohmann::json& d) { d = nlohmann::json::object(); }, "input_rates");
  // the shipped file is the fit's (the CLI test compares it byte for byte with a fresh fit)
  const std::optional<PublishedInputRates> shipped = load_shipped_input_rates(DTSIM_SOURCE_DIR);
  REQUIRE(shipped);
  CHECK(shipped->rows > 0);
  CHECK(shipped->autoaugment_rows > 0);
}

TEST_CASE("runs that decoded ImageNet on their hosts' cores are capped by the cores, and only those") {
  std::vector<PublishedRow> rows;
  for (const PublishedRow& r : load_published_table(table)) {
    // EfficientNet-B0 in AMP on 8 V100s of a DGX-1 (torchvision's loader, AutoAugment, 8 workers a GPU on 40 cores);
    // one GPU of the same (8 cores); Lambda's ResNet-50 on synthetic data
    if (r.id == "dle-pt-effnet-b0-v100-16-amp-b128-g8" || r.id == "dle-pt-effnet-b0-v100-16-amp-b128-g1" ||
        r.id == "lambda-resnet50-a100sxm4-amp-b1280-g1")
      rows.push_back(r);
  }
  REQUIRE(rows.size() == 3);
  PublishedMapping mapping = default_published_mapping(DTSIM_SOURCE_DIR);
  mapping.decode_per_core = 0;  // not modelled
  mapping.decode_per_core_autoaugment = 0;
  const PublishedResult free = predict_published(rows, "all", mapping, DTSIM_SOURCE_DIR);
  mapping.decode_per_core = 100;
  mapping.decode_per_core_autoaugment = 150;
  const PublishedResult capped = predict_published(rows, "all", mapping, DTSIM_SOURCE_DIR);
  REQUIRE(free.cases.size() == 3);
  REQUIRE(capped.cases.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const PublishedCase& f = free.cases[i];
    const PublishedCase& c = capped.cases[i];
    CAPTURE(c.row.id);
    REQUIRE(!c.device.empty());
    if (c.row.id.starts_with("lambda")) {  // synthetic data: no input pipeline, the same prediction
      CHECK(!c.cpu_input);
      CHECK(c.predicted == f.predicted);
      continue;
    }
    CHECK(c.cpu_input);
    CHECK(c.autoaugment);  // EfficientNet's AutoAugment rate, not the plain one
    const double cores = c.row.device_count == 8 ? 40 : 8;
    CHECK(f.predicted > 150 * cores);  // the GPUs alone would go faster than the cores decode
    CHECK(c.predicted <= 150 * cores * (1 + 1e-9));
    CHECK(c.predicted > 0.9 * 150 * cores);  // prefetching keeps the GPUs fed at the cores' rate
  }
}

TEST_CASE("a row reduced once after its last backward: its one-device step plus its reduction, as the whole step") {
  std::vector<PublishedRow> rows;
  for (const PublishedRow& r : load_published_table(table)) {
    // NVIDIA's BERT-large pre-training on 4 and 16 DGX A100 (NCCL's ring on 32 and 128 GPUs, the gradients reduced
    // after the accumulation), and a row without that reduction (DLPerf's BERT-base, apex's buckets)
    if (r.id == "dle-pt-bertl-pre128-mn-a100-80-tf32-b126-n4" ||
        r.id == "dle-pt-bertl-pre128-mn-a100-80-tf32-b126-n16" || r.id == "dlperf-ngcpt-bertb-v100-16-fp32-b32-n2g8")
      rows.push_back(r);
  }
  REQUIRE(rows.size() == 3);
  PublishedMapping defaults = default_published_mapping(DTSIM_SOURCE_DIR);
  defaults.multi_gpu_library = PublishedLibrary::nccl;
  const PublishedResult first = predict_published(rows, "all", defaults, DTSIM_SOURCE_DIR);  // (keeps the reductions)
  PublishedMapping slower = defaults;  // other device parameters: every compute takes longer
  slower.device_of = [&](const std::string& name) {
    Device d = defaults.device_of(name);
    d.efficiency *= 0.7;
    d.tensor_efficiency *= 0.6;
    d.memory_efficiency *= 0.8;
    return d;
  };
  const PublishedResult reused = predict_published(rows, "all", slower, DTSIM_SOURCE_DIR);
  slower.reuse_reductions = false;
  const PublishedResult whole = predict_published(rows, "all", slower, DTSIM_SOURCE_DIR);
  REQUIRE(reused.cases.size() == 3);
  REQUIRE(whole.cases.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(whole.cases[i].row.id);
    REQUIRE(!whole.cases[i].device.empty());
    CHECK(whole.cases[i].predicted < first.cases[i].predicted);  // the parameters matter
    CHECK(reused.cases[i].predicted == Approx(whole.cases[i].predicted).epsilon(1e-9));
  }
}

TEST_CASE("the fit's grid search: a smooth least refined, a flat one kept at the start of its stretch") {
  const auto bowl = [](double x) { return 1 + (x - 3.3) * (x - 3.3); };
  CHECK(grid_search(bowl, 0, 24, Flat::refine) == Approx(3.3).margin(1e-3));
  CHECK(grid_search(bowl, 0, 24, Flat::first) == Approx(3.3).margin(1e-3));  // (not flat: refined the same)
  // flat from 5.5 on, but for a slope far below the cost's rounding (as an input rate's cost is above the rate at
  // which no row waits for its input): refining follows the slope to the end, the first point of the stretch stays
  const auto shelf = [](double x) { return 1 + std::pow(std::max(0.0, 5.5 - x), 2) - 1e-12 * x; };
  CHECK(grid_search(shelf, 0, 24, Flat::refine) > 23);
  CHECK(grid_search(shelf, 0, 24, Flat::first) == 6);
}
