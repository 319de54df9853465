// Measured profiles as compute input (issue 29): PyTorch DDP's bucket rule against what PyTorch itself did, the trace
// and CSV importers on a trace recorded from real PyTorch (validation/pytorch/record_profile.py), their refusals, and
// predict from a profile.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "models/ddp_buckets.hpp"
#include "run_dtsim.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/profile_file.hpp"
#include "validation/framework_validation.hpp"

namespace {

using dtsim::test::run_dtsim;

const std::string data_dir = std::string(DTSIM_SOURCE_DIR) + "/tests/data/pytorch/";
const std::string mlp_trace = data_dir + "mlp-trace.json";

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// A copy of `document` written to a temporary file; returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("dtsim-test-profile-" + name);
  std::ofstream(path) << text;
  return path.string();
}

std::string refusal(const std::string& path) {
  try {
    dtsim::load_profile_file(path);
  } catch (const dtsim::ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("DDP's bucket rule reproduces the buckets PyTorch built for the validation models") {
  const nlohmann::json recorded = read_json(data_dir + "ddp-buckets.json");
  REQUIRE(recorded["records"].size() == 6);  // 3 models x 2 caps
  for (const nlohmann::json& r : recorded["records"]) {
    INFO(r["model"].get<std::string>() << " at bucket_cap_mb " << r["bucket_cap_mb"].get<double>());
    std::vector<std::uint64_t> bytes;  // every parameter's gradient, in the order PyTorch found them ready
    std::vector<std::size_t> sizes;
    for (const nlohmann::json& bucket : r["buckets"]) {
      sizes.push_back(bucket.size());
      for (const nlohmann::json& index : bucket)
        bytes.push_back(r["param_bytes"][index.get<std::size_t>()]);
    }
    REQUIRE(bytes.size() == r["param_bytes"].size());
    const auto counts = dtsim::ddp_bucket_counts(bytes, r["first_bucket_bytes"], r["bucket_cap_bytes"]);
    CHECK(counts == sizes);
    std::size_t next = 0;
    for (std::size_t b = 0; b < counts.size() && b < r["bucket_bytes"].size(); ++b) {
      std::uint64_t total = 0;
      for (std::size_t i = next; i < next + counts[b]; ++i)
        total += bytes[i];
      CHECK(total == r["bucket_bytes"][b].get<std::uint64_t>());
      next += counts[b];
    }
  }
  // the constants are PyTorch's
  CHECK(dtsim::ddp_first_bucket_bytes == recorded["records"][0]["first_bucket_bytes"].get<std::uint64_t>());
  CHECK(dtsim::ddp_bucket_cap_bytes == 26214400);
}

TEST_CASE("a torch.profiler trace of an MLP's steps becomes its layers' times, parameters and gradient order") {
  const dtsim::MeasuredProfile p = dtsim::load_profile_file(mlp_trace);
  CHECK(p.batch == 16);
  CHECK(p.steps == 3);
  REQUIRE(p.layers.size() == 6);  // Flatten, Linear, ReLU, Linear, ReLU, Linear
  const double params[] = {0, 784 * 1024 + 1024, 0, 1024 * 1024 + 1024, 0, 1024 * 10 + 10};
  for (std::size_t l = 0; l < 6; ++l) {
    CHECK(p.layers[l].name == std::to_string(l));
    CHECK(p.layers[l].params == params[l]);
  }
  // backward reaches the layers in reverse; Flatten's output needs no gradient
  CHECK(p.ready_order == std::vector<std::size_t>{5, 4, 3, 2, 1});
  CHECK(p.layers[0].backward_s == 0);
  // the matrix layers dominate, and backward costs them more than forward
  CHECK(p.layers[3].forward_s > 10 * p.layers[4].forward_s);
  CHECK(p.layers[3].backward_s > p.layers[3].forward_s);
  CHECK(p.optimizer_s > 0);
  CHECK(p.overhead_s >= 0);
  // the parts add up to a step as the trace timed it (medians of parts against the median step)
  std::vector<double> steps;
  for (const nlohmann::json& e : read_json(mlp_trace)) {
    if (e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) steps.push_back(e["dur"].get<double>() * 1e-6);
  }
  REQUIRE(steps.size() == 3);
  std::sort(steps.begin(), steps.end());
  CHECK(p.step_s() == Approx(steps[1]).epsilon(0.05));
}

TEST_CASE("traces of another shape are refused with what is missing") {
  const nlohmann::json trace = read_json(mlp_trace);
  auto without = [&](const std::string& prefix) {
    nlohmann::json kept = nlohmann::json::array();
    for (const nlohmann::json& e : trace) {
      if (e["name"].get<std::string>().rfind(prefix, 0) != 0) kept.push_back(e);
    }
    return kept.dump();
  };
  CHECK_THAT(refusal(write_temp("nobackward.json", without("dtsim.backward:"))), Catch::Contains("no backward"));
  CHECK_THAT(refusal(write_temp("noforward.json", without("dtsim.forward:"))), Catch::Contains("names no layer"));
  CHECK_THAT(refusal(write_temp("nostep.json", without("ProfilerStep#"))), Catch::Contains("no complete step"));
  CHECK_THAT(refusal(write_temp("nobatch.json", without("dtsim.batch="))), Catch::Contains("dtsim.batch=B"));
  nlohmann::json batch_zero = trace;
  for (nlohmann::json& e : batch_zero) {
    if (e["name"].get<std::string>().rfind("dtsim.batch=", 0) == 0) e["name"] = "dtsim.batch=0";
  }
  CHECK_THAT(refusal(write_temp("batch0.json", batch_zero.dump())),
             Catch::Contains("(B a whole number in [1, 1073741824]), got \"dtsim.batch=0\""));
  nlohmann::json overlapping = trace;
  for (nlohmann::json& e : overlapping) {
    if (e["name"] == "ProfilerStep#1") e["ts"] = e["ts"].get<double>() - 1000;
  }
  CHECK_THAT(refusal(write_temp("overlap.json", overlapping.dump())), Catch::Contains("overlapping steps"));
  nlohmann::json endless = trace;  // a duration no step takes (1e300 us) is no measurement
  for (nlohmann::json& e : endless) {
    if (e["name"] == "ProfilerStep#1") e["dur"] = 1e300;
  }
  CHECK_THAT(refusal(write_temp("endless.json", endless.dump())), Catch::Contains("a dur in [0, 1e15]"));
  nlohmann::json regrown = trace;  // a layer whose parameters differ between steps is not one layer
  int seen = 0;
  for (nlohmann::json& e : regrown) {
    if (e["name"] == "dtsim.forward:1#params=803840" && ++seen == 2) e["name"] = "dtsim.forward:1#params=803841";
  }
  REQUIRE(seen >= 2);
  CHECK_THAT(refusal(write_temp("regrown.json", regrown.dump())),
             Catch::Contains("ProfilerStep#1: its layers, their parameters or its batch differ from ProfilerStep#0's"));
  CHECK_THAT(refusal(write_temp("object.json", R"({"events": []})")), Catch::Contains("not a trace-event file"));
  CHECK_THAT(refusal(write_temp("number.json", "3")), Catch::Contains("not a trace-event file"));
  CHECK_THAT(refusal(write_temp("syntax.json", "[{")), Catch::Contains("not valid JSON"));
  CHECK_THAT(refusal(write_temp("profile.txt", "x")), Catch::Contains("expected a .json trace"));
  CHECK_THAT(refusal("/nonexistent/trace.json"), Catch::Contains("no such file"));
}

TEST_CASE("a CSV of layer times is read strictly") {
  const std::string good =
      "# batch=32\n# optimizer_ms=2\nlayer,params,forward_ms,backward_ms\nfc1,100,1.5,3\nfc2,10,0.5,1\n";
  const dtsim::MeasuredProfile p = dtsim::load_profile_file(write_temp("good.csv", good));
  CHECK(p.batch == 32);
  REQUIRE(p.layers.size() == 2);
  CHECK(p.layers[0].forward_s == Approx(1.5e-3));
  CHECK(p.layers[1].backward_s == Approx(1e-3));
  CHECK(p.optimizer_s == Approx(2e-3));
  CHECK(p.overhead_s == 0);
  CHECK(p.ready_order == std::vector<std::size_t>{1, 0});
  CHECK_THAT(refusal(write_temp("nobatch.csv", "layer,params,forward_ms,backward_ms\nfc,1,1,1\n")),
             Catch::Contains("# batch=B"));
  CHECK_THAT(refusal(write_temp("header.csv", "# batch=2\nlayer,forward_ms\nfc,1\n")), Catch::Contains("header"));
  CHECK_THAT(refusal(write_temp("negative.csv", "# batch=2\nlayer,params,forward_ms,backward_ms\nfc,1,-1,1\n")),
             Catch::Contains(":3 (forward_ms): expected milliseconds"));
  CHECK_THAT(refusal(write_temp("key.csv", "# batch=2\n# speed=3\nlayer,params,forward_ms,backward_ms\nfc,1,1,1\n")),
             Catch::Contains("unknown setting 'speed'"));
  CHECK_THAT(refusal(write_temp("twice.csv", "# batch=2\nlayer,params,forward_ms,backward_ms\na,1,1,1\na,1,1,1\n")),
             Catch::Contains("appears twice"));
  // a setting given twice is refused (the second had silently replaced the first), and so is a time no step takes
  CHECK_THAT(refusal(write_temp("batch2.csv", "# batch=2\n# batch=4\nlayer,params,forward_ms,backward_ms\na,1,1,1\n")),
             Catch::Contains(":2: batch given twice"));
  // a batch out of range names the range it must lie in
  CHECK_THAT(refusal(write_temp("batch3.csv", "# batch=2000000000\nlayer,params,forward_ms,backward_ms\na,1,1,1\n")),
             Catch::Contains(":1: batch: expected a whole number in [1, 1073741824], got '2000000000'"));
  CHECK_THAT(
      refusal(write_temp("zero.csv", "# batch=16\nlayer,params,forward_ms,backward_ms\n1,0,0,0\n")),
      Catch::Contains("zero.csv: its layers' forward and backward, the optimizer and the overhead add up to 0 s"));
  CHECK_THAT(refusal(write_temp("huge.csv",
                                "# batch=2\n# optimizer_ms=1e300\nlayer,params,forward_ms,backward_ms\na,1,1,1\n")),
             Catch::Contains(":2 (optimizer_ms): expected milliseconds, a number in [0, 1e12], got '1e300'"));
  CHECK_THAT(refusal(write_temp("huge2.csv", "# batch=2\nlayer,params,forward_ms,backward_ms\na,1,1,2e12\n")),
             Catch::Contains(":3 (backward_ms): expected milliseconds"));
}

TEST_CASE("import-profile prints the layers and predict --profile predicts from the measured times", "[cli]") {
  const auto imported = run_dtsim("import-profile " + mlp_trace + " --json");
  REQUIRE(imported.exit_code == 0);
  const nlohmann::json profile = nlohmann::json::parse(imported.output);
  CHECK(profile["batch"] == 16);
  CHECK(profile["layers"].size() == 6);
  CHECK(profile["ddp_bucket_layers"] == nlohmann::json::array({3, 2}));  // fc3, ReLU, fc2 close the 1 MiB bucket
  const auto predicted = run_dtsim("predict --profile " + mlp_trace + " --accelerators 1,4 --algorithm ring --json");
  REQUIRE(predicted.exit_code == 0);
  const nlohmann::json result = nlohmann::json::parse(predicted.output);
  INFO(predicted.output.substr(0, 2000));
  // one accelerator: exactly the measured step (its parts in sequence); four: slower by the exposed allreduce
  const nlohmann::json& rows = result["results"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["step_time_s"].get<double>() == Approx(profile["step_s"].get<double>()).epsilon(1e-9));
  CHECK(rows[1]["step_time_s"].get<double>() > rows[0]["step_time_s"].get<double>());
  // the same profile as a CSV (written by import-profile) predicts the same
  const std::string csv = std::filesystem::temp_directory_path() / "dtsim-test-profile-mlp.csv";
  REQUIRE(run_dtsim("import-profile " + mlp_trace + " --csv " + csv).exit_code == 0);
  const auto from_csv = run_dtsim("predict --profile " + csv + " --accelerators 1,4 --algorithm ring --json");
  REQUIRE(from_csv.exit_code == 0);
  const nlohmann::json again = nlohmann::json::parse(from_csv.output);
  CHECK(again["results"][1]["step_time_s"].get<double>() ==
        Approx(rows[1]["step_time_s"].get<double>()).epsilon(1e-3));  // (the CSV holds times to a microsecond)
  // bad input: exit 2, one line naming the flag
  const auto bad = run_dtsim("predict --profile /nonexistent.json");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--profile: /nonexistent.json: cannot read the file"));
  const auto both = run_dtsim("predict --profile " + mlp_trace + " --model resnet50");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.output, Catch::Contains("not with --model"));
  const auto other_batch = run_dtsim("predict --profile " + mlp_trace + " --batch 32 --accelerators 1");
  CHECK(other_batch.exit_code == 2);
  CHECK_THAT(other_batch.output, Catch::Contains("measured at a batch of 16"));
}

TEST_CASE("the committed PyTorch validation predicts again to the same numbers, from its profiles alone") {
  const std::string reports = std::string(DTSIM_SOURCE_DIR) + "/reports";
  const nlohmann::json committed = read_json(reports + "/pytorch-validation.json");
  const dtsim::FrameworkResult again = dtsim::repredict_framework(committed, reports);
  REQUIRE(again.cases.size() == committed["cases"].size());
  REQUIRE(again.cases.size() >= 8);
  for (std::size_t i = 0; i < again.cases.size(); ++i) {
    CHECK(again.cases[i].predicted_s == Approx(committed["cases"][i]["predicted_s"].get<double>()).epsilon(1e-9));
    CHECK(again.cases[i].buckets == committed["cases"][i]["buckets"].get<int>());
  }
  CHECK(again.median_abs_error == Approx(committed["median_abs_error"].get<double>()).epsilon(1e-9));
  // the prediction of a case is the profile's compute plus what the network leaves exposed: never faster than the
  // compute alone, and slower on a slower network
  dtsim::FrameworkCase c;
  const nlohmann::json& first = committed["cases"][0];
  c.ranks = first["ranks"];
  c.rate_bps = first["rate_bps"];
  c.model = first["model"];
  c.batch = first["batch"];
  c.bucket_mb = first["bucket_mb"];
  c.profile = first["profile"];
  c.compute_s = first["compute_s"];
  c.measured_s = first["measured_s"];
  dtsim::FrameworkNetwork net = again.networks.front();
  dtsim::predict_framework_case(c, net, reports);
  CHECK(c.predicted_s >= c.compute_s);
  const double at_rate = c.predicted_s;
  net.cost.bandwidth_Bps /= 10;
  dtsim::predict_framework_case(c, net, reports);
  CHECK(c.predicted_s > at_rate);
  net.cost.bandwidth_Bps *= 1e4;  // (a thousand times the measured rate: the step is the compute and the reductions)
  dtsim::predict_framework_case(c, net, reports);
  CHECK(c.predicted_s == Approx(c.compute_s).epsilon(0.05));
  CHECK(c.predicted_s >= c.compute_s);
}

TEST_CASE("a framework case waits for its slowest rank's compute, and for a transport slower than the link") {
  const std::string reports = std::string(DTSIM_SOURCE_DIR) + "/reports";
  const nlohmann::json committed = read_json(reports + "/pytorch-validation.json");
  const dtsim::FrameworkResult again = dtsim::repredict_framework(committed, reports);
  dtsim::FrameworkCase c = again.cases.back();
  dtsim::FrameworkNetwork net = again.networks.back();
  REQUIRE(c.ranks == net.ranks);
  REQUIRE(c.ranks > 1);
  c.compute_samples_s.clear();
  net.transport_alone_Bps = 0;
  CHECK(std::isinf(dtsim::transport_bandwidth_Bps(net)));
  dtsim::predict_framework_case(c, net, reports);
  const double plain = c.predicted_s;
  // every rank measured at exactly the compute: the sampled steps are the plain step
  c.compute_samples_s.assign(4 * static_cast<std::size_t>(c.ranks), c.compute_s);
  dtsim::predict_framework_case(c, net, reports);
  CHECK(c.predicted_s == Approx(plain).epsilon(1e-9));
  // (each rank's 4 times in turn, rank-major, replayed side by side: step k takes every rank's k-th time)
  // one rank 30% slower at each moment (rank k mod ranks at moment k): every step waits for a slow rank
  for (std::size_t k = 0; k < 4; ++k)
    c.compute_samples_s[k % static_cast<std::size_t>(c.ranks) * 4 + k] = 1.3 * c.compute_s;
  dtsim::predict_framework_case(c, net, reports);
  const double staggered = c.predicted_s;
  CHECK(staggered > plain + 0.2 * c.compute_s);
  CHECK(staggered < plain + 0.35 * c.compute_s);
  // every rank slow together at moments 0 and 2 (the machine slowed, not a rank): two slow steps of four, so the
  // median lies between a plain and a slow step, where drawing the times independently made nearly every step slow
  c.compute_samples_s.assign(4 * static_cast<std::size_t>(c.ranks), c.compute_s);
  for (std::size_t i = 0; i < c.compute_samples_s.size(); i += 2)
    c.compute_samples_s[i] = 1.3 * c.compute_s;
  dtsim::predict_framework_case(c, net, reports);
  CHECK(c.predicted_s > plain);
  CHECK(c.predicted_s < plain + 0.16 * c.compute_s);
  CHECK(c.predicted_s < staggered);
  // a transport that moves half the link's rate alone (reductions free) slows the step; one faster than the link not
  c.compute_samples_s.clear();
  net.reduce_Bps = 1e30;
  dtsim::predict_framework_case(c, net, reports);
  const double free_reductions = c.predicted_s;
  net.transport_alone_Bps = net.cost.bandwidth_Bps;  // sent and received: half the link's each way
  CHECK(dtsim::transport_bandwidth_Bps(net) == Approx(net.cost.bandwidth_Bps / 2));
  dtsim::predict_framework_case(c, net, reports);
  CHECK(c.predicted_s > free_reductions);
  net.transport_alone_Bps = 4 * net.cost.bandwidth_Bps;
  dtsim::predict_framework_case(c, net, reports);
  CHECK(c.predicted_s == Approx(free_reductions).epsilon(1e-9));
}

TEST_CASE("validate --framework refuses what it cannot run with one line and exit 2") {
  const auto other = run_dtsim("validate --framework tensorflow");
  CHECK(other.exit_code == 2);
  CHECK_THAT(other.output, Catch::Contains("--framework: expected pytorch, got 'tensorflow'"));
  const auto mixed = run_dtsim("validate --framework pytorch --published");
  CHECK(mixed.exit_code == 2);
  CHECK_THAT(mixed.output, Catch::Contains("--published: not with --framework"));
  const auto not_torch = run_dtsim("validate --framework pytorch --repredict " + std::string(DTSIM_SOURCE_DIR) +
                                   "/reports/validation.json --out-dir /tmp");
  CHECK(not_torch.exit_code == 2);
  CHECK_THAT(not_torch.output, Catch::Contains("not a pytorch-validation.json"));
  // its own file read back strictly: each bad field named by its JSON path, a key it never writes refused
  const nlohmann::json committed = read_json(std::string(DTSIM_SOURCE_DIR) + "/reports/pytorch-validation.json");
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> edits = {
      {[](nlohmann::json& j) { j["cases"][1]["bucket"] = 25; }, "cases[1].bucket: unknown key (accepted: ranks"},
      {[](nlohmann::json& j) { j["networks"][0]["cpu_share"] = 2; },
       "networks[0].cpu_share: expected a number in [0, 1], got 2"},
      {[](nlohmann::json& j) { j["cases"][0]["batch"] = 0; }, "cases[0].batch: expected a number in [1, 1048576]"},
      {[](nlohmann::json& j) { j["cases"][0]["profile"] = 7; }, "cases[0].profile: expected a non-empty string, got 7"},
      {[](nlohmann::json& j) {
         j["cases"][0]["compute_samples_s"] = {0.1, -1};
       },
       "cases[0].compute_samples_s[1]: expected a time > 0 s, got -1"},
      {[](nlohmann::json& j) {  // (the quick run's first case has 2 ranks: 3 times cannot be theirs in turn)
         j["cases"][0]["compute_samples_s"] = {0.1, 0.1, 0.1};
       },
       "cases[0].compute_samples_s: 3 times for 2 ranks; expected as many for every rank"},
      {[](nlohmann::json& j) { j["networks"] = nlohmann::json::array(); }, "networks: expected a non-empty list"},
  };
  for (const auto& [edit, message] : edits) {
    nlohmann::json broken = committed;
    edit(broken);
    const std::string bad = write_temp("broken-pytorch-validation.json", broken.dump());
    const auto refused = run_dtsim("validate --framework pytorch --repredict " + bad + " --out-dir /tmp");
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.output, Catch::Contains(message));
  }
}

TEST_CASE("report draws a PyTorch validation: predicted against measured steps and exposed communication", "[cli]") {
  const std::string html = (std::filesystem::temp_directory_path() / "dtsim-test-profile-report.html").string();
  const auto run = run_dtsim("report " + std::string(DTSIM_SOURCE_DIR) + "/reports/pytorch-validation.json -o " + html);
  REQUIRE(run.exit_code == 0);
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(page, Catch::Contains("PyTorch DDP on the emulated cluster against dtsim"));
  const nlohmann::json committed = read_json(std::string(DTSIM_SOURCE_DIR) + "/reports/pytorch-validation.json");
  // one point per case in each of the two charts' model series, one table row per case
  std::size_t rows = 0;
  for (std::size_t at = page.find("<tr><td>"); at != std::string::npos; at = page.find("<tr><td>", at + 1))
    ++rows;
  CHECK(rows == committed["cases"].size());
  std::size_t series = 0;
  for (std::size_t at = page.find("data-series=\"mlp\""); at != std::string::npos;
       at = page.find("data-series=\"mlp\"", at + 1))
    ++series;
  CHECK(series == 2);
  nlohmann::json broken = committed;
  broken["cases"][1].erase("measured_s");
  const std::string bad = write_temp("broken-validation.json", broken.dump());
  const auto refused = run_dtsim("report " + bad + " -o " + html);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Catch::Contains("cases[1].measured_s: missing"));
}

TEST_CASE("validate --framework pytorch refuses rank counts the emulated cluster cannot host, before running",
          "[cli]") {
  const auto many = run_dtsim("validate --framework pytorch --ranks 2,64 --out-dir /tmp");
  CHECK(many.exit_code == 2);
  CHECK_THAT(many.output, Catch::Contains("--ranks: expected rank counts from 2 to 16, e.g. 2,4, got '64'"));
  const auto again = run_dtsim("validate --framework pytorch --ranks 2 --repredict " + std::string(DTSIM_SOURCE_DIR) +
                               "/reports/pytorch-validation.json --out-dir /tmp");
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("--ranks: not with --repredict"));
}
