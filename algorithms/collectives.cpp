#include "algorithms/collectives.hpp"

namespace dtsim {

int initial_owner(const Schedule& s, int rank, std::uint32_t chunk) {
  if (rank >= s.participants) return -1;
  switch (s.collective) {
    case Collective::allreduce:
    case Collective::reduce_scatter:
    case Collective::reduce: return rank;
    case Collective::allgather: return s.chunk_block[chunk] == rank ? rank : -1;
    case Collective::broadcast:
    case Collective::scatter: return rank == s.root ? rank : -1;
    case Collective::gather: return s.chunk_block[chunk] == rank ? rank : -1;
    case Collective::alltoall: return s.chunk_block[chunk] / s.participants == rank ? rank : -1;
  }
  return -1;
}

ExpectedChunk expected_chunk(const Schedule& s, int rank, std::uint32_t chunk) {
  using Kind = ExpectedChunk::Kind;
  if (rank >= s.participants) return {};
  switch (s.collective) {
    case Collective::allreduce: return {Kind::sum_of_all, -1};
    case Collective::reduce_scatter:
      return s.chunk_block[chunk] == rank ? ExpectedChunk{Kind::sum_of_all, -1} : ExpectedChunk{};
    case Collective::allgather: return {Kind::one_rank, s.chunk_block[chunk]};
    case Collective::broadcast: return {Kind::one_rank, s.root};
    case Collective::reduce: return rank == s.root ? ExpectedChunk{Kind::sum_of_all, -1} : ExpectedChunk{};
    case Collective::gather:
      return rank == s.root ? ExpectedChunk{Kind::one_rank, s.chunk_block[chunk]} : ExpectedChunk{};
    case Collective::scatter:
      return s.chunk_block[chunk] == rank ? ExpectedChunk{Kind::one_rank, s.root} : ExpectedChunk{};
    case Collective::alltoall: {
      const int block = s.chunk_block[chunk];
      return block % s.participants == rank ? ExpectedChunk{Kind::one_rank, block / s.participants} : ExpectedChunk{};
    }
  }
  return {};
}

}  // namespace dtsim
