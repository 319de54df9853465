// Pieces of the SimGrid executor that its entry points share (sim/simgrid_executor.cpp for schedules and training
// steps, sim/sgd_training.cpp for real SGD training). Not an interface for other folders.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <simgrid/s4u.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/schedule.hpp"
#include "sim/library_cost.hpp"
#include "sim/network.hpp"
#include "sim/simgrid_executor.hpp"

namespace dtsim::simgrid_detail {

// The stack each actor (a rank) gets, in KiB (SimGrid's contexts/stack-size; its default is 8 MiB).
constexpr int actor_stack_kib = 1024;

// SimGrid as a Network (sim/simgrid_network.cpp) over `units` positions running `segments` (compact ones written
// out), placed as `options` says. Only inside run_in_child: it creates the process's one SimGrid engine. A deadlock is
// reported through `result_fd`; `trace`: where the actors record their steps and messages.
std::unique_ptr<Network> make_simgrid_network(std::span<const Schedule* const> segments, int units,
                                              const SimGridOptions& options, int result_fd, RunTrace* trace);

namespace sg4 = simgrid::s4u;

using Payload = std::vector<float>;

// The mailboxes a rank uses, one per (sender, receiver) pair, sorted by peer for lookup.
struct RankMailboxes {
  int rank = -1;
  std::vector<std::pair<int, sg4::Mailbox*>> out;  // (receiver, mailbox "rank>receiver")
  std::vector<std::pair<int, sg4::Mailbox*>> in;   // (sender, mailbox "sender>rank")
  // Per-message gaps of the route to each receiver and from each sender (as `out` and `in`); empty when no route
  // has one.
  std::vector<double> out_gap_s;
  std::vector<double> in_gap_s;
  bool has_gaps() const { return !out_gap_s.empty() || !in_gap_s.empty(); }
  double gap_to(int peer) const { return gap_of(out, out_gap_s, peer); }
  double gap_from(int peer) const { return gap_of(in, in_gap_s, peer); }

  // Where `peer` is in `list` (present by construction: built from the same ops).
  static std::size_t index_of(const std::vector<std::pair<int, sg4::Mailbox*>>& list, int peer) {
    const auto it = std::lower_bound(list.begin(), list.end(), peer,
                                     [](const std::pair<int, sg4::Mailbox*>& e, int p) { return e.first < p; });
    return static_cast<std::size_t>(it - list.begin());
  }
  static sg4::Mailbox* find(const std::vector<std::pair<int, sg4::Mailbox*>>& list, int peer) {
    return list[index_of(list, peer)].second;
  }
  static double gap_of(const std::vector<std::pair<int, sg4::Mailbox*>>& list, const std::vector<double>& gaps,
                       int peer) {
    return gaps.empty() ? 0.0 : gaps[index_of(list, peer)];
  }
};

// How a rank's messages go: the schedule's rendezvous by default; see the SimGridOptions fields of the same names.
struct SendProtocol {
  bool ready_handshake = false;  // dtsim-mpi-run's receiver-ready protocol
  std::uint64_t send_buffer_bytes = 0;
  int older_send_weight = 1;
};
// One rank's ops of a schedule as straight-line actor code: for each step, post everything, wait for everything,
// then reduce. `buffer` is the rank's real payload (nullptr in simulated-size mode). `protocol`: how its messages
// go. `trace`: where to record the rank's steps, reductions and sent messages.
// `library`: the collective library's costs of the schedule's protocol (inactive: none), on `network`.
struct StepLibrary {
  SegmentLibraryCost cost;
  const NetworkCost* network = nullptr;
};
void execute_steps(const Schedule& s, std::span<const Op> ops, const RankMailboxes& mailboxes, Payload* buffer,
                   double host_flops_per_compute_flop, SendProtocol protocol = {}, RunTrace* trace = nullptr,
                   const StepLibrary& library = {});
// One mailbox per (sender, receiver) pair that any of the schedules uses, with the per-message gap of each pair's
// route (o.topology placed: place_on_star).
std::vector<RankMailboxes> make_mailboxes(std::span<const Schedule* const> schedules, int ranks,
                                          const SimGridOptions& o);
// The network model settings, after the engine exists and before the platform is built.
void configure_engine(const SimGridOptions& o);
// The platform of o.topology (placed: place_on_star): SimGrid's star zone for the star, else the cluster routed for the
// pairs the schedules use.
std::vector<sg4::Host*> build_platform(std::span<const Schedule* const> schedules, int ranks, const SimGridOptions& o);
void write_all(int fd, const void* data, std::size_t size);
// An error record for the parent: a nonzero int32 status, then the message.
void send_error_to_parent(int fd, const std::string& message);
// Runs body(fd) in a forked child and returns what it wrote; `status` receives the child's wait status.
std::string run_in_child(const std::function<void(int)>& body, int& status);
std::string child_failure(int status);
// Reads what run_in_child returned: the int32 status, then either `size` bytes into `out` or an error message that
// is thrown as std::runtime_error.
void read_child_result(const std::string& bytes, int status, void* out, std::size_t size);
// The next `count` values of T in a child's result, from byte `at` on, into `out` (resized); advances `at`. Nothing is
// copied for none: an empty vector's data() may be null, and memcpy with a null pointer is undefined even for 0 bytes.
template <typename T>
void take_array(const std::string& bytes, std::size_t& at, std::size_t count, std::vector<T>& out) {
  if (at > bytes.size() || count > (bytes.size() - at) / sizeof(T)) {
    throw std::runtime_error("simgrid executor: truncated result from the simulation");
  }
  out.resize(count);
  if (count > 0) std::memcpy(out.data(), bytes.data() + at, count * sizeof(T));
  at += count * sizeof(T);
}

}  // namespace dtsim::simgrid_detail
