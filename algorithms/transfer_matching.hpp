// Every transfer of a schedule with its sender's and receiver's steps, matched by the rule every executor follows
// (step_walker.hpp): the k-th send s->d meets the k-th receive at d from s. Matching is FIFO per channel and so
// independent of timing; here it is found in two passes over the ops and a sort per receiver, without walking the
// steps or keeping a queue per channel, for schedules of millions of transfers (a parameter server with a shard per
// node on 4096 GPUs has 8 million a bucket). The flow executor's classes of ranks use it (sim/flow_lumping.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "algorithms/schedule.hpp"

namespace dtsim {

struct MatchedTransfers {
  // Transfers by receiver, then sender, then order on their channel: receiver d's are [first_into[d],
  // first_into[d + 1]).
  std::vector<std::uint64_t> first_into;
  std::vector<std::uint32_t> src;
  std::vector<std::uint32_t> dst;
  std::vector<std::uint32_t> src_step;  // the sender's step, counted from 0 among its ops
  std::vector<std::uint32_t> dst_step;  // the receiver's step
  std::vector<std::uint32_t> span;      // what the sender sends
  std::size_t size() const { return src.size(); }
};

// The transfers of a well-formed, non-compact schedule; nothing if some send or receive has no partner (a channel
// with more of one than of the other: the schedule cannot finish).
std::optional<MatchedTransfers> match_transfers(const Schedule& schedule);

}  // namespace dtsim
