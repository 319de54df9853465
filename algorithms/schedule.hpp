// The Schedule: what a collective algorithm produces and every executor consumes.
//
// A Schedule splits the buffer of `bytes` into chunks (a partition: offsets ascend, sizes add up to `bytes`). An
// operation moves a span: a contiguous run of chunks. Spans 0..C-1 are the single chunks (span c is chunk c); longer
// spans follow, so an algorithm that moves half the buffer at once (Rabenseifner) sends one message, not many.
// Each rank has an ordered list of steps. A step is a group of operations that the rank posts together and waits for:
//   - Send span c to rank d;
//   - RecvReduce span c from rank s: add the incoming data into the local span;
//   - RecvCopy span c from rank s: overwrite the local span with the incoming data;
//   - Compute: local work of a given number of flops (e.g. a layer's backward pass).
// Semantics every executor implements (and the verifier proves against):
//   - all sends of a step read the chunk values as they are when the step begins (a snapshot);
//   - all receives of a step land when the step ends: reduces add, copies overwrite;
//   - the k-th send from s to d matches the k-th receive at d from s (MPI's non-overtaking order), and both name the
//     same span;
//   - a transfer starts once both its send and its receive are posted (rendezvous), so a schedule that is
//     deadlock-free here is deadlock-free under any eager protocol too;
//   - a step ends when all its transfers and computes are done; its reductions then run on the rank's processor.
// Ops are 8 bytes each and stored for all ranks in one array (CSR layout), because a ring over P ranks has 4P(P-1) of
// them: 67 million at 4096 ranks.
// A compact schedule stores a step that an algorithm repeats with rotated chunks once, with a StepRepeat saying how
// often it runs again: the ring's P-1 steps per pass become one, so the ring is O(P) ops instead of O(P^2). Builders
// always produce their compact form where they have one (whichever executor will run it); the flow executor runs it
// as it is, and every other consumer (the verifier, the analytical and SimGrid executors, the MPI and NCCL runners)
// calls expand() itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collective_library.hpp"

namespace dtsim {

enum class OpKind : std::uint8_t { send = 0, recv_reduce = 1, recv_copy = 2, compute = 3 };

const char* to_string(OpKind kind);

// One chunk operation, packed into 8 bytes: kind (2 bits), step-start flag (1 bit), peer rank (29 bits), and an index
// that is the span for transfers and the entry of Schedule::compute_flops for compute.
class Op {
public:
  static constexpr std::uint32_t max_peer = (1U << 29) - 1;

  static Op send(int dst, std::uint32_t span) { return Op(OpKind::send, dst, span); }
  static Op recv_reduce(int src, std::uint32_t span) { return Op(OpKind::recv_reduce, src, span); }
  static Op recv_copy(int src, std::uint32_t span) { return Op(OpKind::recv_copy, src, span); }
  static Op compute(std::uint32_t compute_index) { return Op(OpKind::compute, 0, compute_index); }

  OpKind kind() const { return static_cast<OpKind>(bits_ & 3U); }
  bool starts_step() const { return (bits_ & 4U) != 0; }
  int peer() const { return static_cast<int>(bits_ >> 3); }
  std::uint32_t span() const { return index_; }
  std::uint32_t compute_index() const { return index_; }
  bool is_recv() const { return kind() == OpKind::recv_reduce || kind() == OpKind::recv_copy; }

  void mark_step_start() { bits_ |= 4U; }
  // The same kind of transfer (and step start) with another peer and span.
  Op with(int peer, std::uint32_t span) const {
    Op op(kind(), peer, span);
    op.bits_ |= bits_ & 4U;
    return op;
  }
  bool operator==(const Op&) const = default;

private:
  Op(OpKind kind, int peer, std::uint32_t index);
  std::uint32_t bits_;
  std::uint32_t index_;
};
static_assert(sizeof(Op) == 8);

struct Chunk {
  std::uint64_t offset_bytes = 0;
  std::uint64_t size_bytes = 0;
};

// The step that starts at ops[op] runs `count` more times; in its k-th repetition each single-chunk span c of the
// step becomes base + (c - base + k * stride) mod modulus (the chunk a rotating algorithm moves next).
// lockstep: every rank repeats its step while all the others repeat theirs, alike (a ring's rotation), so that an
// executor may run each repetition as a round that ends when all of them did without changing the time; false for a
// pipeline whose ranks work on different stages at once (a tree's segments), which must be left to drift.
struct StepRepeat {
  std::uint64_t op = 0;
  std::uint32_t count = 0;
  std::uint32_t stride = 0;
  std::uint32_t base = 0;
  std::uint32_t modulus = 1;
  bool lockstep = true;
  bool operator==(const StepRepeat&) const = default;
  // The span of single chunk `span` in repetition k (k = 0: the stored step itself).
  std::uint32_t shifted(std::uint32_t span, std::uint32_t k) const {
    return base + static_cast<std::uint32_t>((span - base + static_cast<std::uint64_t>(k) * stride) % modulus);
  }
};

struct Span {
  std::uint32_t first_chunk = 0;
  std::uint32_t chunk_count = 1;
  bool operator==(const Span&) const = default;
};

// What the collective computes; the verifier checks the matching postcondition.
enum class Collective : std::uint8_t {
  allreduce,
  reduce_scatter,
  allgather,
  broadcast,
  reduce,
  gather,
  scatter,
  alltoall
};

const char* to_string(Collective collective);

struct Schedule {
  Collective collective = Collective::allreduce;
  std::string algorithm;
  int ranks = 0;
  // Ranks 0..participants-1 hold data and must end with the result; ranks above them are helpers (parameter servers
  // on hosts of their own) that start empty and have no postcondition.
  int participants = 0;
  // The helpers run inside the switch the participants share (NVLS: the NVSwitch's reduction engine), not on hosts:
  // on a cluster they are placed on its switch endpoint (place_switch_helpers, sim/topology.hpp).
  bool switch_helpers = false;
  std::uint64_t bytes = 0;
  std::vector<Chunk> chunks;
  std::vector<int> chunk_block;           // reduce-scatter and allgather: the rank whose block holds each chunk
  int root = 0;                           // broadcast and reduce
  std::vector<Span> spans;                // spans[c] is {c, 1} for every chunk c; multi-chunk spans follow
  std::vector<double> compute_flops;      // indexed by Op::compute_index()
  std::vector<Op> ops;                    // all ranks' ops, rank after rank
  std::vector<std::uint64_t> rank_begin;  // ops of rank r are [rank_begin[r], rank_begin[r + 1])
  std::vector<StepRepeat> repeats;        // compact schedules only, ascending by op
  // The collective library's wire protocol this call runs in (models/collective_library.hpp), chosen where the
  // Schedule is laid on a cluster; none: plain messages. Executors charge its costs; the algorithm ignores it.
  Protocol protocol = Protocol::none;
  // The channels the call is split into (copies of it side by side in this Schedule): the library's per-call caps are
  // shared among them.
  std::uint32_t channels = 1;

  bool compact() const { return !repeats.empty(); }
  // The index of the first repeat at or after ops[op] (repeats.size() if none).
  std::size_t first_repeat_from(std::uint64_t op) const;

  std::span<const Op> rank_ops(int rank) const {
    return {ops.data() + rank_begin[static_cast<std::size_t>(rank)],
            ops.data() + rank_begin[static_cast<std::size_t>(rank) + 1]};
  }
  // The bytes a span covers, as one contiguous range of the buffer.
  Chunk span_extent(std::uint32_t span) const {
    const Span& sp = spans[span];
    const Chunk& first = chunks[sp.first_chunk];
    const Chunk& last = chunks[sp.first_chunk + sp.chunk_count - 1];
    return Chunk{first.offset_bytes, last.offset_bytes + last.size_bytes - first.offset_bytes};
  }
  std::uint64_t span_bytes(std::uint32_t span) const { return span_extent(span).size_bytes; }
  std::size_t op_count() const { return ops.size(); }
};

// Splits `bytes` into `parts` contiguous chunks whose sizes differ by at most one element; the first `remainder`
// chunks get the extra element. Sizes are multiples of element_bytes (bytes must be one).
std::vector<Chunk> split_even(std::uint64_t bytes, std::uint32_t parts, std::uint32_t element_bytes);
// split_even for a collective's buffer: no chunks at all when the buffer is empty.
std::vector<Chunk> buffer_chunks(std::uint64_t bytes, std::uint32_t parts, std::uint32_t element_bytes);
// Block b for chunk b, b = 0..count-1 (one chunk per block).
std::vector<int> identity_blocks(std::uint32_t count);
// `ranks` as an unsigned count; throws std::invalid_argument naming the algorithm (of any collective) below 1.
std::uint32_t checked_ranks(const char* algorithm, int ranks);

// `groups` independent copies of `s` side by side (e.g. the data-parallel allreduces of every tensor and pipeline
// rank at once): rank g * s.ranks + r runs copy g of rank r's ops, its peers shifted alike. The copies share the
// buffer layout and never talk to each other.
Schedule replicate_groups(const Schedule& s, int groups);

// Copies of `s` placed on `units` positions: copy g's position p runs on unit unit_of[g * s.ranks + p] (its peers
// mapped alike); units that no copy uses have no ops. unit_of.size() must be a multiple of s.ranks and name distinct
// units in [0, units). replicate_groups is the case unit_of[i] = i. Used to lay collectives of groups of ranks (the
// tensor ranks of a stage, the replicas of a stage's shard) onto the units of a training step.
Schedule place_groups(const Schedule& s, std::span<const int> unit_of, int units);

// The bytes rank `rank` sends and receives in `s` (every repetition of a compact schedule's steps), counted without
// expanding.
struct RankTraffic {
  std::uint64_t sent_bytes = 0;
  std::uint64_t received_bytes = 0;
};
RankTraffic rank_traffic(const Schedule& s, int rank);

// The number of ops expand(s) holds, counted without expanding.
std::uint64_t expanded_op_count(const Schedule& s);
// The number of messages (send ops) expand(s) holds, counted without expanding.
std::uint64_t expanded_send_count(const Schedule& s);
// Throws std::invalid_argument (as ScheduleBuilder::reserve_ops does) when expand(s) would hold more than
// ScheduleBuilder::max_ops ops.
void check_expanded_size(const Schedule& s);
// The full form of a compact schedule (every repetition written out); a copy of any other. Throws as
// check_expanded_size does.
Schedule expand(const Schedule& s);

// `s` with each rank first computing arrival_flops[r] flops, in a step of its own, before its first op: the ranks
// arrive at the collective at different times (a Compute op the executors time at their compute speed). Compact
// schedules stay compact.
Schedule with_arrivals(const Schedule& s, std::span<const double> arrival_flops);

// Builds a Schedule rank by rank: begin_rank(r) for r = 0..ranks-1 in order, then steps of ops.
class ScheduleBuilder {
public:
  ScheduleBuilder(Collective collective, std::string algorithm, int ranks, std::uint64_t bytes,
                  std::vector<Chunk> chunks);

  // Ops beyond this many (2 GiB of them) are refused: the schedule would not fit in a typical machine's memory.
  static constexpr std::uint64_t max_ops = 1ULL << 28;
  // Reserves room for `count` ops; throws std::invalid_argument above max_ops.
  void reserve_ops(std::uint64_t count);
  // Throws as reserve_ops does, before anything is built (for a builder whose other tables grow with `count` too).
  static void check_ops(const std::string& algorithm, int ranks, std::uint64_t count);
  // Only the first `count` ranks hold data (default: all ranks).
  void set_participants(int count);
  // The helpers (ranks from set_participants' count up) run inside the participants' switch (Schedule::switch_helpers).
  void set_switch_helpers() { schedule_.switch_helpers = true; }
  // Reduce-scatter and allgather: chunk c lies in the block of rank block[c].
  void set_chunk_blocks(std::vector<int> block);
  void set_root(int root);
  void begin_rank(int rank);
  void begin_step() { step_open_ = false; }
  void add(Op op);
  // The step just added runs `count` more times, its single-chunk spans rotated as StepRepeat says: recorded as a
  // StepRepeat (the schedule is then compact; expand() writes the repetitions out). Throws std::logic_error when the
  // step holds a multi-chunk span or a compute op.
  void repeat_step(std::uint32_t count, std::uint32_t stride, std::uint32_t base, std::uint32_t modulus,
                   bool lockstep = true);
  std::uint32_t add_compute(double flops);
  // The span of chunks [first, first + count); single chunks are span `first` itself.
  std::uint32_t add_span(std::uint32_t first, std::uint32_t count);
  Schedule finish();

private:
  Schedule schedule_;
  std::unordered_map<std::uint64_t, std::uint32_t> span_index_;  // multi-chunk spans already added, by (first, count)
  int current_rank_ = -1;
  bool step_open_ = false;
  std::uint64_t step_first_ = 0;  // ops index where the open step starts
};

}  // namespace dtsim
