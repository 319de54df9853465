// Pictures of schedules (issue 31): the arrows drawn are exactly the Schedule's transfers and the last round's buffers
// show the collective's postcondition, for every algorithm and collective of the registry (read back from the SVG's
// data attributes, no golden files); the lecture's own examples; the refusals.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/collectives.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/schedule_rounds.hpp"
#include "reports/schedule_drawing.hpp"
#include "run_dtsim.hpp"

namespace {

using dtsim::test::run_dtsim;

struct Arrow {
  int round, src, dst;
  std::uint32_t span;
  auto operator<=>(const Arrow&) const = default;
};

std::vector<Arrow> arrows_in(const std::string& svg) {
  static const std::regex transfer(
      R"re(<g class="transfer" data-round="(\d+)" data-src="(\d+)" data-dst="(\d+)" data-span="(\d+)")re");
  std::vector<Arrow> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), transfer); it != std::sregex_iterator(); ++it) {
    out.push_back({std::stoi((*it)[1]), std::stoi((*it)[2]), std::stoi((*it)[3]),
                   static_cast<std::uint32_t>(std::stoul((*it)[4]))});
  }
  return out;
}

// (state, rank, chunk) -> contributions held, and the value shown if any
std::map<std::tuple<int, int, int>, std::pair<int, std::string>> chunks_in(const std::string& svg) {
  static const std::regex chunk(
      R"re(<rect class="chunk" data-state="(\d+)" data-rank="(\d+)" data-chunk="(\d+)" data-held="(\d+)"(?: data-value="([^"]*)")?)re");
  std::map<std::tuple<int, int, int>, std::pair<int, std::string>> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), chunk); it != std::sregex_iterator(); ++it) {
    out[{std::stoi((*it)[1]), std::stoi((*it)[2]), std::stoi((*it)[3])}] = {std::stoi((*it)[4]), (*it)[5]};
  }
  return out;
}

}  // namespace

TEST_CASE("the arrows drawn are the schedule's transfers, and the last round shows the postcondition") {
  int drawn = 0;
  for (const dtsim::AlgorithmInfo& info : dtsim::algorithms()) {
    for (const int ranks : {2, 5, 8}) {
      dtsim::AlgorithmOptions options;
      dtsim::Schedule schedule;
      try {
        schedule = info.build(ranks, 4096, options);
      } catch (const std::exception&) {
        continue;  // (an algorithm that needs options or other rank counts: its refusal is tested elsewhere)
      }
      INFO(info.name << " " << dtsim::to_string(info.collective) << " on " << ranks << " ranks");
      const dtsim::Schedule expanded = schedule.compact() ? dtsim::expand(schedule) : schedule;
      const dtsim::ScheduleRounds rounds = dtsim::schedule_rounds(expanded);
      dtsim::DrawingRequest request;
      request.layout = dtsim::layout_for(std::string(info.name), expanded.ranks);
      const std::string svg = dtsim::schedule_svg(expanded, rounds, request);
      // every send of the schedule is one arrow from its rank to its peer with its span, and nothing else
      std::multiset<std::tuple<int, int, std::uint32_t>> sends, drawn_arrows;
      for (int r = 0; r < expanded.ranks; ++r) {
        for (const dtsim::Op& op : expanded.rank_ops(r)) {
          if (op.kind() == dtsim::OpKind::send) sends.insert({r, op.peer(), op.span()});
        }
      }
      int last_round = -1;
      for (const Arrow& a : arrows_in(svg)) {
        drawn_arrows.insert({a.src, a.dst, a.span});
        CHECK(a.round >= last_round);  // panels in round order
        last_round = a.round;
      }
      CHECK(drawn_arrows == sends);
      // the last state: each participant's chunks hold what the collective promises
      const auto chunks = chunks_in(svg);
      const int end = rounds.rounds;
      for (int r = 0; r < expanded.participants; ++r) {
        for (std::size_t c = 0; c < expanded.chunks.size(); ++c) {
          const dtsim::ExpectedChunk want = dtsim::expected_chunk(expanded, r, static_cast<std::uint32_t>(c));
          if (want.kind == dtsim::ExpectedChunk::Kind::anything) continue;
          const auto found = chunks.find({end, r, static_cast<int>(c)});
          REQUIRE(found != chunks.end());
          CHECK(found->second.first ==
                (want.kind == dtsim::ExpectedChunk::Kind::sum_of_all ? expanded.participants : 1));
        }
      }
      ++drawn;
    }
  }
  CHECK(drawn > 40);
}

TEST_CASE("the lecture's examples: 1..7 reach 28 through a tree (8 and 13 first), 1..4 reach 10 by butterfly",
          "[cli]") {
  // the lecture's tree: 1, 2 and 5 make 8; 3, 4 and 6 make 13; with 7, 28; then 28 broadcast in two steps. As
  // dtsim's binary tree, rank 0 the root holding 7, its children 5 and 6, their leaves 1, 2 and 3, 4.
  const auto tree =
      run_dtsim("draw --algorithm pipelined-tree --ranks 7 --bytes 4B --values 7,5,6,1,2,3,4 --times off");
  REQUIRE(tree.exit_code == 0);
  const auto chunks = chunks_in(tree.output);
  CHECK(chunks.at({1, 1, 0}).second == "8");  // after round 1
  CHECK(chunks.at({1, 2, 0}).second == "13");
  CHECK(chunks.at({2, 0, 0}).second == "28");                         // after round 2: the root
  CHECK(tree.output.find("data-rounds=\"4\"") != std::string::npos);  // two rounds up, two down
  for (int r = 0; r < 7; ++r)
    CHECK(chunks.at({4, r, 0}).second == "28");
  const auto butterfly = run_dtsim("draw --algorithm butterfly --ranks 4 --bytes 4B --values 1,2,3,4 --times off");
  REQUIRE(butterfly.exit_code == 0);
  const auto b = chunks_in(butterfly.output);
  CHECK(butterfly.output.find("data-rounds=\"2\"") != std::string::npos);
  CHECK(b.at({1, 0, 0}).second == "3");
  CHECK(b.at({1, 1, 0}).second == "3");
  CHECK(b.at({1, 2, 0}).second == "7");
  CHECK(b.at({1, 3, 0}).second == "7");
  for (int r = 0; r < 4; ++r)
    CHECK(b.at({2, r, 0}).second == "10");
  CHECK(butterfly.output.find("data-layout=\"hypercube\"") != std::string::npos);
}

TEST_CASE("draw: rounds are timed on SimGrid, bad input exits 2 naming the flag", "[cli]") {
  const auto timed = run_dtsim("draw --algorithm ring --ranks 4 --bytes 1MB --bandwidth 10Gbps");
  REQUIRE(timed.exit_code == 0);
  CHECK(timed.output.find("class=\"when\">from 0 s to") != std::string::npos);
  // on the star a ring shares no link: the analytical executor times every round as SimGrid does
  const auto analytical =
      run_dtsim("draw --algorithm ring --ranks 4 --bytes 1MB --bandwidth 10Gbps --backend analytical");
  REQUIRE(analytical.exit_code == 0);
  static const std::regex when(R"re(class="when">([^<]*)<)re");
  std::vector<std::string> a, b;
  for (auto it = std::sregex_iterator(timed.output.begin(), timed.output.end(), when); it != std::sregex_iterator();
       ++it)
    a.push_back((*it)[1]);
  for (auto it = std::sregex_iterator(analytical.output.begin(), analytical.output.end(), when);
       it != std::sregex_iterator(); ++it)
    b.push_back((*it)[1]);
  CHECK(a.size() == 6);
  CHECK(a == b);
  CHECK(run_dtsim("draw --algorithm ring --ranks 4 --backend flow").exit_code == 2);
  struct Case {
    std::string args, names;
  };
  for (const Case& c : std::vector<Case>{
           {"--ranks 100", "--summary"},
           {"--ranks 4 --values 1,2,3", "--values"},
           {"--ranks 4 --values 1,2,x,4", "--values"},
           {"--algorithm hierarchical --ranks 6 --ranks-per-node 4", "--ranks-per-node"},
           {"--algorithm nope", "--algorithm"},
           {"--ranks 4 -o picture.png", "--output"},
           {"--ranks 1", "--ranks"},
           {"--cluster dgx-h100 --nodes 9", "--nodes: 72 ranks are too many"},
           {"--algorithm ps --servers 1000000", "--servers: ps on 8 ranks with 1000000 servers"},
       }) {
    INFO(c.args);
    const auto r = run_dtsim("draw " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(c.names) != std::string::npos);
  }
  // without --algorithm, a collective that has no ring draws its first algorithm
  const auto all_to_all = run_dtsim("draw --collective all-to-all --ranks 4 --bytes 4KB --times off -o " +
                                    (std::filesystem::temp_directory_path() / "dtsim-draw-a2a.html").string());
  CHECK(all_to_all.exit_code == 0);
  CHECK_THAT(all_to_all.output, Catch::Contains("of direct on 4 ranks"));
  const auto summary = run_dtsim("draw --algorithm ring --ranks 128 --summary");
  CHECK(summary.exit_code == 0);
  CHECK(summary.output.find("bytes moved per round") != std::string::npos);
}

TEST_CASE("draw --scenario: a training step per rank class, its buckets' allreduces and the exposed wait", "[cli]") {
  const std::string scenario = std::string(DTSIM_SOURCE_DIR) + "/scenarios/training/vgg16-pcie-horovod.json";
  const auto r = run_dtsim("draw --scenario " + scenario + " --accelerators 8");
  REQUIRE(r.exit_code == 0);
  static const std::regex span(R"re(<rect class="span" data-rank="(\d+)" data-kind="([a-z_]+)")re");
  std::map<std::string, int> kinds;
  std::set<int> ranks;
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), span); it != std::sregex_iterator(); ++it) {
    ++kinds[(*it)[2]];
    ranks.insert(std::stoi((*it)[1]));
  }
  CHECK(ranks.count(0) == 1);
  CHECK(kinds["forward"] == 3 * static_cast<int>(ranks.size()));  // three simulated steps per drawn rank
  CHECK(kinds["backward"] == kinds["forward"]);
  CHECK(kinds["optimizer"] == kinds["forward"]);
  CHECK(kinds["allreduce"] > 0);
  // the exposed wait drawn is the one the prediction measured
  static const std::regex exposed(R"re(data-exposed-s="([^"]+)")re");
  static const std::regex wait(R"re(<rect class="exposed" data-rank="0" data-start="([^"]+)" data-end="([^"]+)")re");
  std::smatch e, w;
  REQUIRE(std::regex_search(r.output, e, exposed));
  REQUIRE(std::regex_search(r.output, w, wait));
  CHECK(std::stod(w[2]) - std::stod(w[1]) == Approx(std::stod(e[1])).epsilon(1e-6));
  CHECK(std::stod(e[1]) > 0);  // VGG-16's gradients are ready only at the end of backward
  const auto bad = run_dtsim("draw --scenario " + scenario + " --accelerators 128");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--accelerators") != std::string::npos);
  CHECK(run_dtsim("draw --scenario " + scenario + " --ranks 4").exit_code == 2);
}

TEST_CASE("dtsim lesson: seven sections of simulated numbers, each claim beside its re-simulated what-if", "[cli]") {
  const std::string page = (std::filesystem::temp_directory_path() / "dtsim-test-lesson.html").string();
  const auto r = run_dtsim("lesson --quick -o " + page);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto count = [&](const std::string& what) {
    int n = 0;
    for (std::size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1))
      ++n;
    return n;
  };
  CHECK(count("<section") == 7);
  CHECK(count("class=\"whatif\"") >= 6);
  CHECK(count("<svg") >= 3);  // the ring against the tree, and the two drawings
  CHECK(html.find("The ring wins from <b>") != std::string::npos);
  CHECK(html.find("versions stale on average") != std::string::npos);
  CHECK(html.find("http") == html.find("http://www.w3.org"));  // nothing fetched: only SVG's namespace
  const auto bad = run_dtsim("lesson -o lesson.pdf");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--output") != std::string::npos);
}
