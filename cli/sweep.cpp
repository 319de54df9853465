#include "cli/sweep.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <stdexcept>
#include <utility>

#include "cli/flags.hpp"
#include "scenarios/input_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"

namespace dtsim {

// Record fields, by name, both ways (nlohmann's macros; the types are found by argument-dependent lookup).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AlphaBetaGamma, alpha_s, bandwidth_Bps, reduce_Bps, gap_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ExecutionResult, time_s, rank_finish_s, messages, bytes_sent, payload_checked,
                                   payload_ok, payload_max_abs_error, wall_s, setup_wall_s, peak_rss_bytes,
                                   event_batches, skipped_steps, rank_classes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LinkUsage, name, kind, capacity_Bps, bytes, busy_s, busy_fraction, utilisation, busy)
NLOHMANN_JSON_SERIALIZE_ENUM(Protocol, {{Protocol::none, "none"},
                                        {Protocol::simple, "simple"},
                                        {Protocol::ll128, "ll128"},
                                        {Protocol::ll, "ll"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Sampler, {{Sampler::fast, "fast"}, {Sampler::exact, "exact"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HistogramBin, from_s, to_s, count)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepDistribution, samples, seed, sampler, mean_s, p50_s, p90_s, p99_s, min_s, max_s,
                                   histogram)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CollectiveRun, algorithm, collective, ranks, helper_ranks, bytes, backend,
                                   network_model, cost, cluster, library, protocol, channels, result, closed_form_s,
                                   verified, links_recorded, links, distribution, arrival, note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryUse, weights_bytes, gradient_bytes, optimizer_bytes, activation_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TrainingResult, step_s, input_stall_s, forward_s, backward_s, exposed_comm_s,
                                   optimizer_s, comm_s, wall_s, rank_classes)
NLOHMANN_JSON_SERIALIZE_ENUM(Backend, {{Backend::simgrid, "simgrid"},
                                       {Backend::flow, "flow"},
                                       {Backend::analytical, "analytical"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LinkClassLoad, link_class, links, utilisation)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BucketReduction, algorithm, protocol, channels, buckets, smallest_bytes,
                                   largest_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LinkGroup, kind, capacity_Bps, count, bytes, busy_fraction, utilisation, first)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Prediction, accelerators, nodes, algorithm, local_batch, global_batch, memory, fits,
                                   step, samples_per_s, speedup, efficiency, bottleneck, reductions, backend,
                                   most_utilised_links, busiest_links, distribution)

namespace cli {
namespace {

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// A journal line's check: FNV-1a (64 bits) of the sweep, the index and the record as written, so that a line edited
// after dtsim wrote it (a record's numbers, its index) is refused instead of read as a result.
std::string journal_check(const std::string& signature, std::size_t index, const nlohmann::json& record) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const std::string& part : {signature, std::to_string(index), record.dump()}) {
    for (const char c : part) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ULL;
    }
    hash ^= 0xff;  // (a separator)
    hash *= 1099511628211ULL;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// The journal's complete lines (a line cut short by an interrupted write is dropped, and cut off the file so that
// the next append starts a fresh line). Lines of another sweep are refused.
std::map<std::size_t, nlohmann::json> read_journal(const std::string& path, const std::string& signature,
                                                   bool truncate_tail) {
  std::map<std::size_t, nlohmann::json> done;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return done;  // a new journal
  if (const std::string problem = input_file_problem(path); !problem.empty()) throw UsageError("--resume: " + problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--resume: " + path + ": cannot read the file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t complete = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (truncate_tail && complete < text.size()) {
    if (::truncate(path.c_str(), static_cast<off_t>(complete)) != 0) {
      throw UsageError("--resume: cannot cut the unfinished last line off " + path);
    }
  }
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < complete;) {
    const std::size_t end = text.find('\n', at);
    ++line_no;
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    nlohmann::json entry;
    try {
      entry = parse_json_text(line);
    } catch (const ScenarioError& e) {
      throw UsageError("--resume: " + path + " line " + std::to_string(line_no) + ": " + e.what() +
                       " (expected the lines a sweep appends)");
    }
    if (!entry.is_object() || !entry.contains("sweep") || !entry.contains("index") || !entry.contains("record") ||
        !entry.contains("check") || !entry["sweep"].is_string() || !entry["index"].is_number_unsigned() ||
        !entry["record"].is_object() || !entry["check"].is_string() || entry["record"].contains("error")) {
      throw UsageError("--resume: " + path + " line " + std::to_string(line_no) +
                       ": expected {\"sweep\", \"index\", \"record\", \"check\"} as dtsim appends them");
    }
    if (entry["sweep"] != signature) {
      throw UsageError("--resume: " + path + " holds results of another sweep ('" + entry["sweep"].get<std::string>() +
                       "'); give this one a file of its own");
    }
    if (entry["check"] != journal_check(signature, entry["index"].get<std::size_t>(), entry["record"])) {
      throw UsageError("--resume: " + path + " line " + std::to_string(line_no) +
                       ": the result does not match its check (changed after dtsim wrote it): start a new file");
    }
    done[entry["index"].get<std::size_t>()] = std::move(entry["record"]);
  }
  return done;
}

void append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("--resume: cannot append to " + path);
  // one write per line: appends from several processes never interleave within a line
  const ssize_t written = ::write(fd, line.data(), line.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size())) throw UsageError("--resume: cannot append to " + path);
}

nlohmann::json error_record(const std::exception& e, bool usage) {
  return nlohmann::json{{"error", e.what()}, {"usage", usage}};
}

}  // namespace

Sweep::Sweep(std::string journal, std::string signature)
    : journal_(std::move(journal)), signature_(std::move(signature)) {
  if (!launched_by_mpirun()) return;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised == 0) MPI_Init(nullptr, nullptr);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Sweep::~Sweep() {
  if (mpi_) MPI_Finalize();
}

std::vector<nlohmann::json> Sweep::run(std::size_t count, const std::function<nlohmann::json(std::size_t)>& one,
                                       const std::function<std::string(std::size_t)>& describe) {
  std::map<std::size_t, nlohmann::json> done;
  if (!journal_.empty()) {
    // every process reads (and refuses a bad journal alike); the root also cuts an unfinished last line off, and
    // nobody appends before it has
    done = read_journal(journal_, signature_, is_root());
    if (mpi_) MPI_Barrier(MPI_COMM_WORLD);
  }
  if (!done.empty() && done.rbegin()->first >= count) {  // (a check cannot tell a sweep of another length)
    throw UsageError("--resume: " + journal_ + " holds result " + std::to_string(done.rbegin()->first) +
                     ", but this sweep has " + std::to_string(count) + " configurations: start a new file");
  }
  std::size_t mine = 0;
  for (std::size_t i = static_cast<std::size_t>(rank_); i < count; i += static_cast<std::size_t>(size_))
    mine += done.count(i) == 0 ? 1 : 0;
  ProgressLine progress(mpi_ ? "sweep rank 0" : "sweep", is_root() ? mine : 0);  // on a terminal, rank 0's
  nlohmann::json computed = nlohmann::json::array();  // [index, record] pairs this process ran
  // Largest first: configurations come smallest first, so the one most likely to be refused (memory, ranks) runs
  // first, and the first error ends this process's part of the sweep instead of waiting behind every smaller one.
  std::vector<std::size_t> order;
  for (std::size_t i = static_cast<std::size_t>(rank_); i < count; i += static_cast<std::size_t>(size_))
    order.push_back(i);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::size_t i = *it;
    if (done.count(i) != 0) continue;
    progress.next(describe(i));
    nlohmann::json record;
    try {
      record = one(i);
    } catch (const UsageError& e) {
      record = error_record(e, true);
    } catch (const std::bad_alloc&) {  // what no estimate caught: bad input too, as the command line says it
      record = nlohmann::json{{"error", describe(i) + ": " + out_of_memory_text}, {"usage", true}};
    } catch (const std::exception& e) {
      record = error_record(e, false);
    }
    if (!journal_.empty() && !record.contains("error")) {
      const std::string check = journal_check(signature_, i, record);
      append_line(
          journal_,
          nlohmann::json{{"sweep", signature_}, {"index", i}, {"record", record}, {"check", check}}.dump() + "\n");
    }
    const bool failed = record.contains("error");
    computed.push_back({i, std::move(record)});
    if (failed) break;
  }
  if (mpi_) {  // gather every process's records on the root
    const std::string mine_text = computed.dump();
    const int length = static_cast<int>(mine_text.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(static_cast<std::size_t>(size_), 0);
    long long total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    if (total > std::numeric_limits<int>::max()) throw std::runtime_error("sweep: results over 2 GB to gather");
    std::string all(is_root() ? static_cast<std::size_t>(total) : 0, '\0');
    MPI_Gatherv(mine_text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (!is_root()) return {};
    computed = nlohmann::json::array();
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      for (auto& pair : nlohmann::json::parse(
               all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])))) {
        computed.push_back(std::move(pair));
      }
    }
  }
  for (auto& pair : computed)
    done[pair[0].get<std::size_t>()] = std::move(pair[1]);
  for (const auto& [index, record] : done) {  // an error ends the sweep (some configurations were not run)
    if (!record.contains("error")) continue;
    const std::string message = record["error"].get<std::string>();
    if (record["usage"].get<bool>()) throw UsageError(message);
    throw std::runtime_error(message);
  }
  std::vector<nlohmann::json> records;
  records.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    records.push_back(std::move(done.at(i)));
  return records;
}

std::string sweep_signature(const std::string& command, std::span<char* const> args) {
  std::string signature = command;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--resume") {
      ++i;
      continue;
    }
    if (arg.starts_with("--resume=")) continue;
    signature += ' ';
    signature += arg;
  }
  return signature;
}

namespace {

// A record this binary wrote has every field; one that lacks some came from a --resume file of another version.
template <typename T>
T from_record(const nlohmann::json& record) {
  try {
    return record.get<T>();
  } catch (const nlohmann::json::exception&) {  // (the JSON library's own words name no file nor line)
    throw UsageError("--resume: a result recorded by another version of dtsim: start a new file");
  }
}

}  // namespace

nlohmann::json to_record(const CollectiveRun& run) { return run; }
CollectiveRun collective_run_from_record(const nlohmann::json& record) { return from_record<CollectiveRun>(record); }
nlohmann::json to_record(const Prediction& prediction) { return prediction; }
Prediction prediction_from_record(const nlohmann::json& record) { return from_record<Prediction>(record); }
nlohmann::json to_record(const std::vector<LinkUsage>& links) { return links; }
std::vector<LinkUsage> links_from_record(const nlohmann::json& record) {
  return from_record<std::vector<LinkUsage>>(record);
}

}  // namespace cli
}  // namespace dtsim
