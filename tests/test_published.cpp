// The published measurements (validation/published/measurements.csv): every row parses and has a source, the fit and
// test splits are disjoint and each holds rows, and bad tables are refused naming the line and column.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "scenarios/json_reader.hpp"
#include "scenarios/published_file.hpp"

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
}

TEST_CASE("a bad published table is refused naming the line and the column") {
  const std::string good_row =
      "r1,v100,1,1,none,PyTorch,20.06,resnet50,amp,256,,1000,images/s total,https://example.org/t,table 1,,fit\n";
  CHECK_NOTHROW(load_published_table(write_table("ok.csv", header() + good_row)));
  CHECK_THROWS_WITH(load_published_table(
                        write_table("nosource.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,resnet50,amp,256,,1000,"
                                                               "images/s total,,table 1,,fit\n")),
                    Catch::Contains("nosource.csv:2 (source_url): every row needs its source's URL"));
  CHECK_THROWS_WITH(load_published_table(write_table("split.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,resnet50,"
                                                                             "amp,256,,1000,images/s total,"
                                                                             "https://e.org,t,,both\n")),
                    Catch::Contains("split.csv:2 (split): expected fit or test, got 'both'"));
  CHECK_THROWS_WITH(load_published_table(write_table("twice.csv", header() + good_row + good_row)),
                    Catch::Contains("twice.csv:3 (id): 'r1' is already a row's id"));
  CHECK_THROWS_WITH(load_published_table(write_table("header.csv", "id,device\n" + good_row)),
                    Catch::Contains("header.csv:1: the header must be id,device,device_count"));
  CHECK_THROWS_WITH(load_published_table(write_table("quote.csv", header() + "\"r1,v100\n")),
                    Catch::Contains("quote.csv:2: a quoted field is not closed"));
  CHECK_THROWS_WITH(load_published_table(write_table("number.csv", header() + "r1,v100,1,1,none,PyTorch,20.06,resnet50,"
                                                                              "amp,256,,-5,images/s total,"
                                                                              "https://e.org,t,,fit\n")),
                    Catch::Contains("number.csv:2 (throughput): expected a positive number, got '-5'"));
}
