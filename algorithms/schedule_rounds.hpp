// A Schedule as rounds, for pictures and lessons: which transfers run at once, and what every rank's buffer holds
// after each round.
//
// A rank's steps run one after another; a transfer runs once its send and its receive are both posted. Giving every
// transfer unit time, round(transfer) = max(start(sender's step), start(receiver's step)), and a step ends one round
// after its last transfer: start(next step) = 1 + max round of the step's transfers. So ring allreduce on P ranks
// has 2(P - 1) rounds, recursive doubling log2 P, a binomial tree's reduce then broadcast 2 log2 P. The walk is the
// verifier's (algorithms/step_walker.hpp): the same matching, the same contribution counts, so the last round's
// buffers show the collective's postcondition.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/schedule.hpp"

namespace dtsim {

struct RoundTransfer {
  int round = 0;
  int src = 0;
  int dst = 0;
  std::uint32_t span = 0;
  std::uint64_t bytes = 0;
  bool reduce = false;  // received into a reduction (false: a copy)
  int index = 0;        // the k-th transfer from src to dst (from 0), as executors number them
};

struct ScheduleRounds {
  int ranks = 0;
  int participants = 0;
  std::size_t chunks = 0;
  int rounds = 0;
  std::vector<RoundTransfer> transfers;  // by round, then as matched
  // contributions[k][(r x chunks + c) x ranks + q]: how often rank q's contribution is in rank r's copy of chunk c
  // after round k - 1 (k = 0: the start; k = rounds: the end)
  std::vector<std::vector<std::uint16_t>> contributions;

  std::uint16_t count(int after_round, int rank, std::size_t chunk, int contributor) const {
    return contributions[static_cast<std::size_t>(after_round)]
                        [(static_cast<std::size_t>(rank) * chunks + chunk) * static_cast<std::size_t>(ranks) +
                         static_cast<std::size_t>(contributor)];
  }
  // How many contributions rank r's chunk c holds at state k (with multiplicity).
  int held(int state, int rank, std::size_t chunk) const;
};

// Throws std::invalid_argument for a schedule that does not verify (the verifier's message) or whose state (ranks^2 x
// chunks x rounds counts) would exceed `max_cells`. contributions false: the rounds' transfers only (no
// verification, no buffers: any size the walk can hold).
ScheduleRounds schedule_rounds(const Schedule& schedule, bool contributions = true,
                               std::uint64_t max_cells = 1ULL << 26);

}  // namespace dtsim
