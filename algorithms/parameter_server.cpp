// Synchronous parameter server allreduce with S server shards; shard s is byte range s of S equal parts.
// Phases: push: every worker sends shard s to server s (in one step, all shards at once); each server adds up the P
//   shards it receives. Pull: every server sends its reduced shard to every worker, which copies it.
//   Servers on hosts of their own (default) are helper ranks P..P+S-1 that start empty; co-located servers are workers
//   0, k, 2k, ..., (S-1)k (k = server_stride: 1, or the ranks per node for one server per node), each keeping its own
//   shard locally.
// Cost without contention: 2 (alpha + n/S beta) + P n/S gamma (P-1 instead of P when co-located).
//   With one link per host every server link carries P shards each way, so on a star:
//   2 (alpha + P n/(S B)) + P n/S gamma on hosts of their own, 2 (alpha + (P-1) n/(S B)) + (P-1) n/S gamma co-located
//   (Li et al. 2014, "Scaling distributed machine learning with the parameter server", OSDI; the incast that makes a
//   single server P times slower than the ring is the reason allreduce replaced it, Sergeev and Del Balso 2018).
#include "algorithms/parameter_server.hpp"

#include <stdexcept>

namespace dtsim {

Schedule parameter_server_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("ps", ranks);
  const auto s = static_cast<std::uint32_t>(options.number(ps_servers_option));
  const bool colocated = options.text(ps_placement_option) == "colocated";
  if (s < 1) throw OptionError("servers", "expected at least 1 server, got 0");
  if (colocated && s > p) {
    throw OptionError("servers", "expected at most " + std::to_string(p) + " co-located servers (one per rank), got " +
                                     std::to_string(s));
  }
  const auto stride = static_cast<std::uint32_t>(options.number(ps_server_stride_option));
  if (stride < 1) throw std::invalid_argument("ps: expected a server stride of at least 1, got 0");
  if (colocated && static_cast<std::uint64_t>(s - 1) * stride >= p) {
    throw OptionError("servers", std::to_string(s) + " co-located servers " + std::to_string(stride) +
                                     " ranks apart do not fit in " + std::to_string(p) + " ranks");
  }
  const std::uint32_t total = colocated ? p : p + s;
  auto server_rank = [&](std::uint32_t shard) { return colocated ? shard * stride : p + shard; };
  ScheduleBuilder builder(Collective::allreduce, "ps", static_cast<int>(total), bytes,
                          buffer_chunks(bytes, s, options.element_bytes));
  builder.set_participants(ranks);
  const bool nothing_to_send = bytes == 0 || (colocated && p == 1);
  if (!nothing_to_send) builder.reserve_ops(4ULL * p * s);
  for (std::uint32_t r = 0; r < total; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    const bool worker = r < p;
    const bool server = colocated ? r % stride == 0 && r / stride < s : r >= p;
    const std::uint32_t own = server ? (colocated ? r / stride : r - p) : 0;
    builder.begin_step();  // push
    if (worker) {
      for (std::uint32_t shard = 0; shard < s; ++shard) {
        if (server_rank(shard) != r) builder.add(Op::send(static_cast<int>(server_rank(shard)), shard));
      }
    }
    if (server) {
      for (std::uint32_t w = 0; w < p; ++w) {
        if (w != r) builder.add(Op::recv_reduce(static_cast<int>(w), own));
      }
    }
    builder.begin_step();  // pull
    if (server) {
      for (std::uint32_t w = 0; w < p; ++w) {
        if (w != r) builder.add(Op::send(static_cast<int>(w), own));
      }
    }
    if (worker) {
      for (std::uint32_t shard = 0; shard < s; ++shard) {
        if (server_rank(shard) != r) builder.add(Op::recv_copy(static_cast<int>(server_rank(shard)), shard));
      }
    }
  }
  return builder.finish();
}

double parameter_server_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                    const AlgorithmOptions& options) {
  return parameter_server_seconds(ranks, bytes, cost, static_cast<std::uint32_t>(options.number(ps_servers_option)),
                                  options.text(ps_placement_option) == "colocated");
}

}  // namespace dtsim
