#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Which chunk a message of an all-pairs step carries, between sender s and receiver q of P ranks.
enum class PairBlock : std::uint8_t {
  receiver_chunk,  // chunk q of P (a reduce-scatter's: every rank sends the receiver its part)
  sender_chunk,    // chunk s of P (an allgather's: every rank sends its own part to every other)
  pair_block,      // block s P + q of P x P (an all-to-all's)
};

// One step of a direct algorithm: every rank sends one message to every other rank and receives one from each.
struct AllPairsStep {
  PairBlock block = PairBlock::pair_block;
  OpKind receive = OpKind::recv_copy;  // recv_reduce: the receiver adds what it gets into its chunk
};

// A direct algorithm as what it does, without its P x P operations: the buffer split into chunks (P, or P x P for
// pair blocks) as split_even splits it, and its all-pairs steps. build_all_pairs writes the Schedule from it; the flow
// executor runs it by classes of ranks when that Schedule is too large to write (sim/all_pairs_lumping.hpp).
struct AllPairs {
  Collective collective = Collective::allreduce;
  const char* algorithm = "direct";
  int ranks = 0;
  std::uint64_t bytes = 0;
  std::uint32_t element_bytes = 1;  // (AlgorithmOptions::element_bytes, as every builder sets it)
  std::vector<AllPairsStep> steps;  // empty when there is nothing to send (one rank, no bytes)

  std::uint64_t chunk_count() const;  // 0 for an empty buffer
  // Chunk i's bytes, as split_even sizes it (the first elements % chunks chunks hold an element more).
  std::uint64_t chunk_bytes(std::uint64_t i) const;
  // The largest and the smallest chunk (they differ by at most an element).
  std::uint64_t largest_chunk_bytes() const;
  std::uint64_t smallest_chunk_bytes() const;
  // The messages and bytes every step together sends (every rank's, every repetition of nothing: one each).
  std::uint64_t messages() const;
  std::uint64_t bytes_sent() const;
  // The ops the written-out Schedule holds: 2 P (P - 1) a step.
  std::uint64_t op_count() const;
};

// The direct algorithms' steps: the allreduce's reduce-scatter and allgather, the all-to-all's one step.
AllPairs direct_allreduce_pairs(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
AllPairs direct_alltoall_pairs(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// The Schedule of an all-pairs algorithm: in each step rank r sends to q = 0..P-1 (q != r) the step's block and
// receives the matching one from q. Throws std::invalid_argument (as ScheduleBuilder::check_ops) when it would hold
// more than ScheduleBuilder::max_ops ops, before its P x P blocks are laid out.
Schedule build_all_pairs(const AllPairs& pairs);

// Direct allreduce: reduce-scatter by direct sends to each chunk's owner, then a direct allgather.
Schedule direct_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Linear gather to options.root, scatter from it, and all-to-all: every block travels in one message, all at once.
Schedule direct_gather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule direct_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule direct_alltoall(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
