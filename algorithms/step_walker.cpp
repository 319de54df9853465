#include "algorithms/step_walker.hpp"

#include <algorithm>
#include <sstream>

namespace dtsim {

std::string check_well_formed(const Schedule& s, bool allow_compact) {
  const auto p = static_cast<std::size_t>(s.ranks);
  if (s.ranks < 1) return "schedule has no ranks";
  if (s.participants < 1 || s.participants > s.ranks) return "schedule's participants are not among its ranks";
  if (s.rank_begin.size() != p + 1 || s.rank_begin.front() != 0 || s.rank_begin.back() != s.ops.size()) {
    return "schedule has no op range for every rank";
  }
  for (std::size_t r = 0; r < p; ++r) {
    if (s.rank_begin[r] > s.rank_begin[r + 1]) return "schedule op ranges are not in order";
  }
  std::uint64_t offset = 0;
  for (std::size_t c = 0; c < s.chunks.size(); ++c) {
    if (s.chunks[c].offset_bytes != offset) {
      return "chunk " + std::to_string(c) + " starts at byte " + std::to_string(s.chunks[c].offset_bytes) +
             ", expected " + std::to_string(offset) + " (chunks must tile the buffer)";
    }
    offset += s.chunks[c].size_bytes;
  }
  if (offset != s.bytes) return "chunks cover " + std::to_string(offset) + " bytes of " + std::to_string(s.bytes);
  if (s.spans.size() < s.chunks.size()) return "schedule has fewer spans than chunks";
  const bool blocks = s.collective == Collective::reduce_scatter || s.collective == Collective::allgather ||
                      s.collective == Collective::gather || s.collective == Collective::scatter ||
                      s.collective == Collective::alltoall;
  if (blocks && s.chunk_block.size() != s.chunks.size()) return "schedule does not say which block each chunk is in";
  const long long block_count =
      s.collective == Collective::alltoall ? static_cast<long long>(s.participants) * s.participants : s.participants;
  for (int b : s.chunk_block) {
    if (b < 0 || b >= block_count) return "a chunk's block is out of range";
  }
  if (s.root < 0 || s.root >= s.participants) return "root is not a participating rank";
  for (std::size_t i = 0; i < s.spans.size(); ++i) {
    const Span& sp = s.spans[i];
    if (i < s.chunks.size()
            ? (sp.first_chunk != i || sp.chunk_count != 1)
            : (sp.chunk_count == 0 || static_cast<std::uint64_t>(sp.first_chunk) + sp.chunk_count > s.chunks.size())) {
      return "span " + std::to_string(i) + " is not a run of chunks in range (spans 0..C-1 must be the single chunks)";
    }
  }
  for (std::size_t r = 0; r < p; ++r) {
    const auto ops = s.rank_ops(static_cast<int>(r));
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const auto where = [&] { return "rank " + std::to_string(r) + " op " + std::to_string(i) + ": "; };
      if (i == 0 && !op.starts_step()) return where() + "first op does not start a step";
      if (op.kind() == OpKind::compute) {
        if (op.compute_index() >= s.compute_flops.size()) return where() + "compute index out of range";
        continue;
      }
      if (static_cast<std::size_t>(op.peer()) >= p) {
        return where() + "peer " + std::to_string(op.peer()) + " is not a rank (ranks: " + std::to_string(p) + ")";
      }
      if (static_cast<std::size_t>(op.peer()) == r) return where() + to_string(op.kind()) + " to itself";
      if (op.span() >= s.spans.size()) {
        return where() + "span " + std::to_string(op.span()) +
               " out of range (spans: " + std::to_string(s.spans.size()) + ")";
      }
    }
  }
  if (s.compact() && !allow_compact) return "a compact schedule (only the flow executor runs them; expand() it first)";
  for (std::size_t i = 0; i < s.repeats.size(); ++i) {
    const StepRepeat& repeat = s.repeats[i];
    const auto where = [&] { return "step repeat " + std::to_string(i) + ": "; };
    if (i > 0 && repeat.op <= s.repeats[i - 1].op) return where() + "repeats are not in op order";
    if (repeat.op >= s.ops.size() || !s.ops[repeat.op].starts_step()) return where() + "not at the start of a step";
    if (repeat.modulus == 0 || static_cast<std::uint64_t>(repeat.base) + repeat.modulus > s.chunks.size()) {
      return where() + "rotates chunks outside the buffer";
    }
    const auto rank = static_cast<std::size_t>(std::upper_bound(s.rank_begin.begin(), s.rank_begin.end(), repeat.op) -
                                               s.rank_begin.begin() - 1);
    for (std::uint64_t j = repeat.op; j < s.rank_begin[rank + 1] && (j == repeat.op || !s.ops[j].starts_step()); ++j) {
      const Op& op = s.ops[j];
      if (op.kind() == OpKind::compute || op.span() < repeat.base || op.span() >= repeat.base + repeat.modulus) {
        return where() + "rotates an op that is not a single chunk in its rotation";
      }
    }
  }
  return {};
}

std::string describe_span(const Schedule& schedule, std::uint32_t span) {
  const Span& sp = schedule.spans[span];
  if (sp.chunk_count == 1) return "chunk " + std::to_string(sp.first_chunk);
  return "chunks " + std::to_string(sp.first_chunk) + "-" + std::to_string(sp.first_chunk + sp.chunk_count - 1);
}

namespace detail {

std::string describe_unmatched(std::span<const std::pair<std::size_t, std::string>> pending) {
  std::vector<std::pair<std::size_t, std::string>> sorted(pending.begin(), pending.end());
  std::sort(sorted.begin(), sorted.end());
  std::ostringstream out;
  for (std::size_t i = 0; i < sorted.size() && i < 3; ++i) {
    out << (i > 0 ? "; " : "") << "rank " << sorted[i].first << " waits on " << sorted[i].second;
  }
  if (sorted.size() > 3) out << "; and " << sorted.size() - 3 << " more";
  return out.str();
}

}  // namespace detail
}  // namespace dtsim
