// dtsim-mpi-run: runs a dtsim Schedule for real over MPI (non-blocking sends and receives per step, real float
// reductions), or the MPI library's own MPI_Allreduce, and checks the result against the expected sum.
// usage: mpirun -np P dtsim-mpi-run ALGORITHM|mpi BYTES REPETITIONS
// Rank 0 prints "median_s min_s ok|WRONG" where each repetition's time is the slowest rank's, between barriers; the
// buffer is refilled before every repetition, outside the timed part. The step semantics are the Schedule's: sends
// read the buffer as it is when the step starts, receives land in scratch space and are applied when the step ends.
// DTSIM_STEP_TIMES=1 in the environment (mpirun -x DTSIM_STEP_TIMES=1): each rank also prints the milliseconds each of
// its steps took in the last repetition, on stderr.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "algorithms/collectives.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "validation/payload.hpp"

namespace {

void fill(const dtsim::Schedule& s, int rank, std::vector<float>& buffer) {
  std::fill(buffer.begin(), buffer.end(), 0.0F);
  for (std::uint32_t c = 0; c < s.chunks.size(); ++c) {
    const int owner = dtsim::initial_owner(s, rank, c);
    if (owner < 0) continue;
    for (std::uint64_t e = s.chunks[c].offset_bytes / 4; e < (s.chunks[c].offset_bytes + s.chunks[c].size_bytes) / 4;
         ++e) {
      buffer[e] = dtsim::validation_value(owner, e);
    }
  }
}

bool check(const dtsim::Schedule& s, int rank, const std::vector<float>& buffer) {
  if (rank >= s.participants) return true;
  for (std::uint32_t c = 0; c < s.chunks.size(); ++c) {
    const dtsim::ExpectedChunk want = dtsim::expected_chunk(s, rank, c);
    if (want.kind == dtsim::ExpectedChunk::Kind::anything) continue;
    for (std::uint64_t e = s.chunks[c].offset_bytes / 4; e < (s.chunks[c].offset_bytes + s.chunks[c].size_bytes) / 4;
         ++e) {
      double expected = 0;
      if (want.kind == dtsim::ExpectedChunk::Kind::one_rank) {
        expected = dtsim::validation_value(want.rank, e);
      } else {
        for (int k = 0; k < s.participants; ++k)
          expected += dtsim::validation_value(k, e);
      }
      if (buffer[e] != static_cast<float>(expected)) return false;
    }
  }
  return true;
}

// One rank's ops, step by step, with preallocated requests and scratch space. Receiver-ready protocol: a step posts
// its receives and sends each sender an empty "ready" message (tag 1); each send waits for its receiver's ready
// message and then goes out eagerly into the posted receive. A rank that runs ahead thus cannot load the link of a
// receiver still busy with an earlier step (with plain eager sends it did, and the delays grew from step to step:
// Rabenseifner at 8 ranks took 1.3-1.5x its lockstep time). The SimGrid executor models the same protocol.
void execute(const dtsim::Schedule& s, int rank, std::vector<float>& buffer, std::vector<float>& scratch,
             std::vector<MPI_Request>& requests, std::vector<MPI_Request>& ready, std::vector<double>* step_ends) {
  const auto ops = s.rank_ops(rank);
  std::size_t i = 0;
  while (i < ops.size()) {
    std::size_t end = i;
    do {
      ++end;
    } while (end < ops.size() && !ops[end].starts_step());
    requests.clear();
    ready.clear();
    std::size_t scratch_at = 0;
    for (std::size_t k = i; k < end; ++k) {
      if (!ops[k].is_recv()) continue;
      const int count = static_cast<int>(s.span_bytes(ops[k].span()) / 4);
      requests.emplace_back();
      MPI_Irecv(scratch.data() + scratch_at, count, MPI_FLOAT, ops[k].peer(), 0, MPI_COMM_WORLD, &requests.back());
      scratch_at += static_cast<std::size_t>(count);
      ready.emplace_back();
      MPI_Isend(nullptr, 0, MPI_BYTE, ops[k].peer(), 1, MPI_COMM_WORLD, &ready.back());
    }
    MPI_Waitall(static_cast<int>(ready.size()), ready.data(), MPI_STATUSES_IGNORE);
    for (std::size_t k = i; k < end; ++k) {  // compute ops (none in collectives) are skipped
      if (ops[k].kind() != dtsim::OpKind::send) continue;
      const dtsim::Chunk c = s.span_extent(ops[k].span());
      MPI_Recv(nullptr, 0, MPI_BYTE, ops[k].peer(), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      requests.emplace_back();
      MPI_Isend(buffer.data() + c.offset_bytes / 4, static_cast<int>(c.size_bytes / 4), MPI_FLOAT, ops[k].peer(), 0,
                MPI_COMM_WORLD, &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    scratch_at = 0;
    for (std::size_t k = i; k < end; ++k) {
      const dtsim::Op& op = ops[k];
      if (!op.is_recv()) continue;
      const dtsim::Chunk c = s.span_extent(op.span());
      float* to = buffer.data() + c.offset_bytes / 4;
      const float* from = scratch.data() + scratch_at;
      const std::size_t count = c.size_bytes / 4;
      if (op.kind() == dtsim::OpKind::recv_copy) {
        std::copy(from, from + count, to);
      } else {
        for (std::size_t e = 0; e < count; ++e)
          to[e] += from[e];
      }
      scratch_at += count;
    }
    if (step_ends != nullptr) step_ends->push_back(MPI_Wtime());
    i = end;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 4) {
    if (rank == 0) std::fprintf(stderr, "usage: dtsim-mpi-run ALGORITHM|COLLECTIVE/ALGORITHM|mpi BYTES REPETITIONS\n");
    MPI_Finalize();
    return 2;
  }
  const std::string algorithm = argv[1];
  const std::uint64_t bytes = std::strtoull(argv[2], nullptr, 10) / 4 * 4;
  const int repetitions = std::max(1, std::atoi(argv[3]));
  dtsim::AlgorithmOptions options;
  options.element_bytes = 4;
  options.set(dtsim::ps_placement_option.name, "colocated");  // every rank is a host of the cluster
  dtsim::Schedule schedule;
  const bool library = algorithm == "mpi";
  try {
    // every step written out: the ranks run them one by one
    schedule =
        dtsim::expand(dtsim::find_qualified_algorithm(library ? "ring" : algorithm).build(ranks, bytes, options));
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "dtsim-mpi-run: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  std::vector<float> buffer(bytes / 4);
  // scratch space for the most any step of this rank receives (a parameter server receives P-1 shards at once)
  std::size_t most = 0;
  {
    const auto ops = schedule.rank_ops(rank);
    std::size_t step = 0;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].starts_step()) step = 0;
      if (ops[k].is_recv()) step += schedule.span_bytes(ops[k].span()) / 4;
      most = std::max(most, step);
    }
  }
  std::vector<float> scratch(most + 1);
  std::vector<float> result(library ? bytes / 4 : 0);
  std::vector<MPI_Request> requests;
  requests.reserve(4096);
  std::vector<MPI_Request> ready;
  ready.reserve(4096);
  std::vector<double> times;
  // DTSIM_STEP_TIMES=1: every rank prints the seconds each of its steps took in the last repetition (stderr)
  const bool step_times = std::getenv("DTSIM_STEP_TIMES") != nullptr;
  std::vector<double> step_ends;
  step_ends.reserve(4096);
  bool ok = true;
  for (int r = 0; r < repetitions + 1; ++r) {  // repetition 0 warms connections up and is not counted
    fill(schedule, rank, buffer);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (library) {
      MPI_Allreduce(buffer.data(), result.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else {
      step_ends.clear();
      step_ends.push_back(start);
      execute(schedule, rank, buffer, scratch, requests, ready, step_times ? &step_ends : nullptr);
    }
    double elapsed = MPI_Wtime() - start;
    double slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (r > 0) times.push_back(slowest);
    ok = ok && check(schedule, rank, library ? result : buffer);
  }
  if (step_times && step_ends.size() > 1) {
    std::string line = "steps rank " + std::to_string(rank) + ":";
    for (std::size_t k = 1; k < step_ends.size(); ++k)
      line += " " + std::to_string((step_ends[k] - step_ends[k - 1]) * 1e3);
    std::fprintf(stderr, "%s ms\n", line.c_str());
  }
  int mine = ok ? 1 : 0;
  int all = 0;
  MPI_Reduce(&mine, &all, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::sort(times.begin(), times.end());
    std::printf("%.9e %.9e %s\n", times[times.size() / 2], times.front(), all == 1 ? "ok" : "WRONG");
  }
  MPI_Finalize();
  return 0;
}
