// The symbolic verifier: executes a Schedule on contribution counts instead of data and proves that
//   - every op is well formed (peers and chunks in range, no self-sends, no copy racing another receive of the chunk),
//   - every send meets a receive of the same chunk (k-th send s->d matches k-th receive at d from s),
//   - no deadlock under rendezvous semantics (hence none under any eager protocol),
//   - the collective's postcondition holds: for allreduce every participating rank ends with every chunk holding each
//     participant's contribution exactly once (helper ranks, such as parameter servers, start empty).
// The state is a count per (rank, chunk, contributing rank), so memory grows as ranks^2 x chunks; schedules above
// `max_state_cells` are refused rather than verified partially.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/schedule.hpp"

namespace dtsim {

struct VerifyReport {
  bool ok = false;
  std::string error;       // first problem found, empty when ok
  bool too_large = false;  // not verified: the walk's state would exceed the limit (error says how much)
  std::uint64_t messages = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t max_steps = 0;  // longest rank program, in steps
};

inline constexpr std::uint64_t default_max_state_cells = 1ULL << 28;

// A compact schedule is expanded first (after the state-size check, which does not depend on it).
VerifyReport verify(const Schedule& schedule, std::uint64_t max_state_cells = default_max_state_cells);

// Why a schedule of `ranks` ranks and `chunks` chunks is too large to verify (its state above max_state_cells), or
// an empty string: what verify() refuses, known before the schedule is built where its chunks are (an all-pairs
// algorithm's, algorithms/direct.hpp).
std::string too_large_to_verify(std::uint64_t ranks, std::uint64_t chunks,
                                std::uint64_t max_state_cells = default_max_state_cells);

}  // namespace dtsim
