// What each collective starts from and must end with, per (rank, chunk), in terms of whose data is there. The
// verifier proves schedules against it and the SimGrid executor's real-payload mode fills and checks buffers with it.
//   allreduce       every participant starts with its data in every chunk; every participant ends with the sum
//   reduce_scatter  as allreduce at the start; participant r ends with the sum in the chunks of block r
//   allgather       participant r starts with its data in block r only; everyone ends with block b from rank b
//   broadcast       the root starts with its data in every chunk; everyone ends with it
//   reduce          as allreduce at the start; the root ends with the sum
//   gather          participant r starts with block r; the root ends with block b from rank b
//   scatter         the root starts with every block; participant r ends with block r from the root
//   all-to-all      the buffer is P x P blocks, block i*P + j from rank i to rank j: rank i starts with blocks i*P + j
//                   (all j), rank j ends with blocks i*P + j (all i) from rank i
// Block b is the chunks whose Schedule::chunk_block is b (the buffer cut into P blocks, P x P for all-to-all; an
// algorithm may cut a block into several chunks).
#pragma once

#include <cstdint>

#include "algorithms/schedule.hpp"

namespace dtsim {

// Whose data the rank's copy of the chunk holds at the start: a rank, or -1 for nothing (zeros).
int initial_owner(const Schedule& schedule, int rank, std::uint32_t chunk);

struct ExpectedChunk {
  enum class Kind : std::uint8_t { anything, one_rank, sum_of_all } kind = Kind::anything;
  int rank = -1;  // for one_rank: whose data
};
ExpectedChunk expected_chunk(const Schedule& schedule, int rank, std::uint32_t chunk);

}  // namespace dtsim
