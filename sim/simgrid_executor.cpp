#include "sim/simgrid_executor.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "algorithms/collectives.hpp"
#include "algorithms/step_walker.hpp"
#include "sim/simgrid_internal.hpp"

namespace sg4 = simgrid::s4u;

namespace dtsim {

const char* to_string(NetworkModel model) { return model == NetworkModel::cm02 ? "CM02" : "LV08"; }

float payload_value(std::uint64_t seed, int rank, std::uint64_t element) {
  // splitmix64 of (seed, rank, element)
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(rank) * 0xBF58476D1CE4E5B9ULL + element;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int>(z % 129) - 64);
}

namespace simgrid_detail {

// Shared by all actors of one simulation (they run one at a time inside SimGrid, so no locking).
struct Simulation {
  const Schedule& schedule;
  const SimGridOptions& options;
  std::vector<RankMailboxes> mailboxes;  // per rank
  std::vector<Payload> buffers;          // real-payload mode: one per rank
  std::vector<double> finish_s;
  int finished = 0;
  RunTrace trace;  // options.record_trace only
};

// Waits for the "ready" message of `receiver` to `sender`.
void ready_mailbox_get(int sender, int receiver) {
  sg4::Mailbox::by_name("ready" + std::to_string(receiver) + ">" + std::to_string(sender))->get<int>();
}

// One rank's ops of a schedule as straight-line actor code: for each step, post everything, wait for everything,
// then reduce. `buffer` is the rank's real payload (nullptr in simulated-size mode).

void execute_steps(const Schedule& s, std::span<const Op> ops, const RankMailboxes& mailboxes, Payload* buffer,
                   double host_flops_per_compute_flop, SendProtocol protocol, RunTrace* trace,
                   const StepLibrary& library) {
  const SegmentLibraryCost& lib = library.cost;
  if (lib.active && lib.start_s > 0) sg4::this_actor::sleep_for(lib.start_s);  // the launch and base latency
  static int dummy_payload = 0;  // SimGrid refuses null payloads; simulated-size mode sends this
  const bool ready_handshake = protocol.ready_handshake;
  // a send buffer splits each message into a head the step waits for and a buffered tail (sent when the head is done)
  const std::uint64_t buffered = protocol.send_buffer_bytes;
  // split: a head and a tail of `buffered` bytes; otherwise one message (held, or wholly buffered if buffered > 0)
  auto split = [buffered](std::uint64_t bytes) { return buffered > 0 && bytes > buffered; };
  // A message (a head, a tail) moves as `parts` comms, so that one written while an earlier step's are still on their
  // way gets 1 / parts of their share: theirs are equal parts, its bytes are all in its first (the others empty).
  const int parts = buffered > 0 ? std::max(1, protocol.older_send_weight) : 1;
  // a protocol moves more bytes on the wire than its payload, at most at its rate cap
  auto wire_factor = [&](int src, int dst) {
    return lib.wire_factor[static_cast<std::size_t>(hop_class(*library.network, src, dst))];
  };
  auto put = [&](sg4::Mailbox* out, int peer, void* payload, std::uint64_t bytes) {
    if (!lib.active) return out->put_async(payload, bytes);
    const double wire = wire_factor(mailboxes.rank, peer);
    sg4::CommPtr comm = out->put_init(payload, static_cast<double>(bytes) * wire);
    // (not on an empty message: SimGrid 3.32 ends a rate-bounded empty comm at once, without its latency)
    if (lib.rate_cap_Bps > 0 && bytes > 0) comm->set_rate(lib.rate_cap_Bps * wire);
    comm->start();
    return comm;
  };
  auto put_parts = [&](int peer, void* payload, std::uint64_t bytes, bool newer,
                       std::vector<sg4::CommPtr>& into) {  // the first part carries the payload
    sg4::Mailbox* out = RankMailboxes::find(mailboxes.out, peer);
    const std::uint64_t each = newer ? 0 : bytes / static_cast<std::uint64_t>(parts);
    into.push_back(put(out, peer, payload, bytes - each * static_cast<std::uint64_t>(parts - 1)));
    for (int k = 1; k < parts; ++k)
      into.push_back(put(out, peer, &dummy_payload, each));
  };
  struct Tail {
    std::size_t head;  // its head's first part's place in `comms`
    int peer;
    std::uint64_t bytes;
    bool newer;  // its message was written while an earlier step's were on their way
  };
  std::vector<Tail> tails;              // of this step's sends
  std::vector<sg4::CommPtr> in_flight;  // buffered messages and tails on their way: waited for after the last step
  std::size_t earlier = 0;              // in_flight[0, earlier): those of earlier steps, maybe done since
  auto older_on_the_way = [&] {         // (each done comm is tested once, then dropped)
    const auto first = in_flight.begin();
    const auto kept = std::remove_if(first, first + static_cast<std::ptrdiff_t>(earlier),
                                     [](const sg4::CommPtr& c) { return c->test(); });
    const auto dropped = static_cast<std::size_t>(first + static_cast<std::ptrdiff_t>(earlier) - kept);
    in_flight.erase(kept, first + static_cast<std::ptrdiff_t>(earlier));
    earlier -= dropped;
    return earlier > 0;
  };
  int* tail_sink = nullptr;  // where a tail's (empty) payload lands
  struct SentMessage {
    std::size_t comm;
    int peer;
    std::uint64_t bytes;
  };
  std::vector<SentMessage> sent;  // recording only
  std::vector<sg4::CommPtr> comms;
  std::vector<Payload*> landed;  // real mode: one slot per receive of the step
  std::vector<const Op*> recv_ops;
  std::vector<std::pair<std::size_t, int>> library_recvs;  // (place in `comms`, sender) of a library's messages
  std::size_t i = 0;
  while (i < ops.size()) {
    comms.clear();
    earlier = in_flight.size();
    recv_ops.clear();
    landed.clear();
    sent.clear();
    const double step_start_s = trace != nullptr ? sg4::Engine::get_clock() : 0.0;
    std::uint64_t received_bytes = 0;
    std::uint64_t reduce_bytes = 0;
    double compute_flops = 0.0;
    const bool gaps = mailboxes.has_gaps();
    const double posted_at = gaps ? sg4::Engine::get_clock() : 0.0;
    StepGaps step_gaps;
    std::size_t end = i;
    do {
      const Op& op = ops[end];
      if (gaps && op.kind() == OpKind::send) step_gaps.add_send(mailboxes.gap_to(op.peer()));
      if (gaps && op.is_recv()) step_gaps.add_recv(mailboxes.gap_from(op.peer()));
      if (op.is_recv()) {
        recv_ops.push_back(&op);
        received_bytes += s.span_bytes(op.span());
        if (op.kind() == OpKind::recv_reduce) reduce_bytes += s.span_bytes(op.span());
      } else if (op.kind() == OpKind::compute) {
        compute_flops += s.compute_flops[op.compute_index()];
      }
      ++end;
    } while (end < ops.size() && !ops[end].starts_step());
    landed.assign(recv_ops.size(), nullptr);

    std::size_t recv_slot = 0;
    library_recvs.clear();
    auto post_receive = [&](const Op& op) {  // the message, or its head, brings the payload; a tail brings nothing
      sg4::Mailbox* in = RankMailboxes::find(mailboxes.in, op.peer());
      if (lib.active) library_recvs.emplace_back(comms.size(), op.peer());
      if (lib.active && lib.rate_cap_Bps > 0 && s.span_bytes(op.span()) > 0) {  // (either side may post first)
        sg4::CommPtr comm = in->get_init()->set_dst_data(reinterpret_cast<void**>(&landed[recv_slot++]), sizeof(void*));
        comm->set_rate(lib.rate_cap_Bps * wire_factor(op.peer(), mailboxes.rank));
        comm->start();
        comms.push_back(comm);
      } else {
        comms.push_back(in->get_async<Payload>(&landed[recv_slot++]));
      }
      const int more = parts - 1 + (split(s.span_bytes(op.span())) ? parts : 0);
      for (int k = 0; k < more; ++k)
        comms.push_back(in->get_async<int>(&tail_sink));
    };
    if (ready_handshake) {  // post the receives, announce them, then send each message once its receiver is ready
      auto ready_mailbox = [](int from, int to) {
        return sg4::Mailbox::by_name("ready" + std::to_string(from) + ">" + std::to_string(to));
      };
      for (std::size_t k = i; k < end; ++k) {  // (SimGrid matches even an empty put with its get: wait at step end)
        if (!ops[k].is_recv()) continue;
        post_receive(ops[k]);
        comms.push_back(ready_mailbox(mailboxes.rank, ops[k].peer())->put_async(&dummy_payload, 0));
      }
    }
    for (std::size_t k = i; k < end; ++k) {
      const Op& op = ops[k];
      if (op.kind() == OpKind::send) {
        if (ready_handshake) ready_mailbox_get(mailboxes.rank, op.peer());
        void* payload = &dummy_payload;
        if (buffer != nullptr) {
          const Chunk c = s.span_extent(op.span());
          const float* from = buffer->data() + c.offset_bytes / 4;
          payload = std::make_unique<Payload>(from, from + c.size_bytes / 4).release();  // owned by the receiver
        }
        const std::uint64_t bytes = s.span_bytes(op.span());
        const bool newer = parts > 1 && older_on_the_way();
        if (buffered > 0 && !split(bytes)) {  // all of it fits in the buffer: the step does not wait for it
          put_parts(op.peer(), payload, bytes, newer, in_flight);
          continue;
        }
        const std::uint64_t tail = split(bytes) ? buffered : 0;
        if (tail > 0) tails.push_back({comms.size(), op.peer(), tail, newer});
        if (trace != nullptr) sent.push_back({comms.size(), op.peer(), bytes});
        put_parts(op.peer(), payload, bytes - tail, newer, comms);
      } else if (op.is_recv() && !ready_handshake) {
        post_receive(op);
      }
    }
    // a library reduces as the data arrives (fused): its reduction runs beside the transfers, not after them
    const double fused_until = lib.active ? sg4::Engine::get_clock() + static_cast<double>(reduce_bytes) /
                                                                           sg4::this_actor::get_host()->get_speed()
                                          : 0.0;
    if (lib.active) reduce_bytes = 0;
    sg4::ExecPtr compute;
    if (compute_flops > 0.0) compute = sg4::this_actor::exec_async(compute_flops * host_flops_per_compute_flop);
    if (tails.empty()) {
      for (const sg4::CommPtr& comm : comms)
        comm->wait();  // Comm::wait_all costs a dynamic_cast per comm in 3.32
    } else {           // each tail leaves as soon as its head is done
      std::vector<sg4::CommPtr> waiting = comms;
      std::vector<std::size_t> place(comms.size());
      for (std::size_t k = 0; k < place.size(); ++k)
        place[k] = k;
      while (!waiting.empty()) {
        const auto done = static_cast<std::size_t>(sg4::Comm::wait_any(waiting));
        for (const Tail& t : tails) {
          if (t.head != place[done]) continue;
          put_parts(t.peer, &dummy_payload, t.bytes, t.newer, in_flight);
        }
        waiting[done] = waiting.back();
        waiting.pop_back();
        place[done] = place.back();
        place.pop_back();
      }
      tails.clear();
    }
    if (compute) compute->wait();
    if (fused_until > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(fused_until);
    if (gaps) {  // the step's per-message gaps, beside its transfers and compute
      const double left = posted_at + step_gaps.seconds() - sg4::Engine::get_clock();
      if (left > 0) sg4::this_actor::sleep_for(left);
    }
    if (!library_recvs.empty()) {  // each eager message is seen its hop's latency after it landed
      double seen = sg4::Engine::get_clock();
      for (const auto& [at, peer] : library_recvs) {
        const HopClass hop = hop_class(*library.network, peer, mailboxes.rank);
        seen = std::max(seen, comms[at]->get_finish_time() + lib.hop_latency_s[static_cast<std::size_t>(hop)]);
      }
      if (seen > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(seen);
    }
    const double reduce_start_s = trace != nullptr ? sg4::Engine::get_clock() : 0.0;
    if (reduce_bytes > 0) sg4::this_actor::execute(static_cast<double>(reduce_bytes));  // host speed = reduce rate
    if (trace != nullptr) {
      for (const SentMessage& m : sent) {
        const sg4::CommPtr& comm = comms[m.comm];
        trace->transfers.push_back({mailboxes.rank, m.peer, m.bytes, comm->get_start_time(), comm->get_finish_time()});
      }
      const double now = sg4::Engine::get_clock();
      if (reduce_bytes > 0)
        trace->spans.push_back({mailboxes.rank, SpanKind::reduce, reduce_bytes, reduce_start_s, now});
      trace->spans.push_back({mailboxes.rank, SpanKind::step, received_bytes, step_start_s, now});
    }

    for (std::size_t k = 0; k < recv_ops.size(); ++k) {
      const std::unique_ptr<Payload> incoming(buffer != nullptr ? landed[k] : nullptr);
      if (!incoming) continue;
      const Chunk c = s.span_extent(recv_ops[k]->span());
      float* to = buffer->data() + c.offset_bytes / 4;
      if (recv_ops[k]->kind() == OpKind::recv_copy) {
        std::copy(incoming->begin(), incoming->end(), to);
      } else {
        for (std::size_t e = 0; e < incoming->size(); ++e)
          to[e] += (*incoming)[e];
      }
    }
    i = end;
  }
  for (const sg4::CommPtr& comm : in_flight)
    comm->wait();
}

void run_rank(Simulation& sim, int rank) {
  const double host_flops_per_compute_flop = sim.options.cost.reduce_Bps / sim.options.compute_flops_per_s;
  Payload* buffer = sim.options.real_payload ? &sim.buffers[static_cast<std::size_t>(rank)] : nullptr;
  execute_steps(sim.schedule, sim.schedule.rank_ops(rank), sim.mailboxes[static_cast<std::size_t>(rank)], buffer,
                host_flops_per_compute_flop,
                {sim.options.ready_handshake, sim.options.send_buffer_bytes, sim.options.older_send_weight},
                sim.options.record_trace ? &sim.trace : nullptr,
                {segment_library_cost(sim.options, sim.schedule), &sim.options});
  sim.finish_s[static_cast<std::size_t>(rank)] = sg4::Engine::get_clock();
  ++sim.finished;
}

// One mailbox per (sender, receiver) pair that any of the schedules uses; FIFO per pair is the matching rule, also
// across schedules run one after the other.
std::vector<RankMailboxes> make_mailboxes(std::span<const Schedule* const> schedules, int ranks,
                                          const SimGridOptions& o) {
  std::vector<RankMailboxes> mailboxes(static_cast<std::size_t>(ranks));
  std::vector<int> out_peers;
  std::vector<int> in_peers;
  auto link = [](std::vector<int>& peers, std::vector<std::pair<int, sg4::Mailbox*>>& list, auto mailbox_name) {
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    list.reserve(peers.size());
    for (int peer : peers)
      list.emplace_back(peer, sg4::Mailbox::by_name(mailbox_name(peer)));
  };
  for (int r = 0; r < ranks; ++r) {
    out_peers.clear();
    in_peers.clear();
    for (const Schedule* s : schedules) {
      for (const Op& op : s->rank_ops(r)) {
        if (op.kind() == OpKind::send) out_peers.push_back(op.peer());
        if (op.is_recv()) in_peers.push_back(op.peer());
      }
    }
    RankMailboxes& mb = mailboxes[static_cast<std::size_t>(r)];
    mb.rank = r;
    const std::string self = std::to_string(r);
    link(out_peers, mb.out, [&](int peer) { return self + ">" + std::to_string(peer); });
    link(in_peers, mb.in, [&](int peer) { return std::to_string(peer) + ">" + self; });
  }
  if (!has_message_gaps(*o.topology)) return mailboxes;
  auto gap = [&](int src, int dst) {
    const auto& at = o.accelerator_of;
    return o.topology->path(at[static_cast<std::size_t>(src)], at[static_cast<std::size_t>(dst)]).message_gap_s;
  };
  for (RankMailboxes& mb : mailboxes) {
    for (const auto& [peer, mailbox] : mb.out)
      mb.out_gap_s.push_back(gap(mb.rank, peer));
    for (const auto& [peer, mailbox] : mb.in)
      mb.in_gap_s.push_back(gap(peer, mb.rank));
  }
  return mailboxes;
}

// The star (Topology::star) as SimGrid's own star zone: a host per endpoint, its link its route up and down.
void build_star(int ranks, const SimGridOptions& o, std::vector<sg4::Host*>& hosts) {
  const Topology& star = *o.topology;
  auto* zone = sg4::create_star_zone("star");
  hosts.reserve(static_cast<std::size_t>(ranks));
  std::vector<sg4::Host*> host_of(static_cast<std::size_t>(star.endpoints()), nullptr);
  std::vector<int> positions(static_cast<std::size_t>(star.endpoints()), 0);
  for (int r = 0; r < ranks; ++r) {
    const int h = o.accelerator_of[static_cast<std::size_t>(r)];
    sg4::Host*& host = host_of[static_cast<std::size_t>(h)];  // positions on one host share its link
    if (host == nullptr) {
      const std::string id = std::to_string(h);
      const LinkSpec& spec = star.links()[static_cast<std::size_t>(h)].spec;
      host = zone->create_host("h" + id, star.reduce_Bps(h))->seal();
      const sg4::Link* link =
          zone->create_split_duplex_link("l" + id, spec.bandwidth_Bps)->set_latency(spec.latency_s)->seal();
      zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                      {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    }
    if (++positions[static_cast<std::size_t>(h)] == 2) {  // a message between two of them crosses no link of the star
      constexpr double loopback_Bps = 1e18;               // (as the other engines: an empty route, no time)
      const sg4::Link* loopback = zone->create_link("lo" + std::to_string(h), loopback_Bps)->set_latency(0)->seal();
      zone->add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(loopback)},
                      false);
    }
    hosts.push_back(host);
  }
  zone->seal();
}

void build_cluster(std::span<const Schedule* const> schedules, int ranks, const SimGridOptions& o,
                   std::vector<sg4::Host*>& hosts) {
  const Topology& topology = *o.topology;
  auto* zone = sg4::create_full_zone("cluster");
  hosts.reserve(static_cast<std::size_t>(ranks));
  std::vector<sg4::Host*> host_of(static_cast<std::size_t>(topology.endpoints()), nullptr);
  for (int r = 0; r < ranks; ++r) {
    const int acc = o.accelerator_of[static_cast<std::size_t>(r)];
    sg4::Host*& host = host_of[static_cast<std::size_t>(acc)];
    // (a switch endpoint, NVLS's engine, reduces in flight: Topology::reduce_Bps)
    if (host == nullptr) host = zone->create_host("a" + std::to_string(acc), topology.reduce_Bps(acc))->seal();
    hosts.push_back(host);
  }
  // sending accelerators of each receiving accelerator, grouped so that one BFS from the receiver routes them all
  std::vector<std::vector<int>> senders(static_cast<std::size_t>(topology.endpoints()));
  for (const Schedule* s : schedules) {
    for (int r = 0; r < ranks; ++r) {
      for (const Op& op : s->rank_ops(r)) {
        if (op.kind() != OpKind::send) continue;
        senders[static_cast<std::size_t>(o.accelerator_of[static_cast<std::size_t>(op.peer())])].push_back(
            o.accelerator_of[static_cast<std::size_t>(r)]);
      }
    }
  }
  std::vector<const sg4::Link*> links(topology.links().size(), nullptr);
  std::vector<sg4::LinkInRoute> route;
  for (int dst = 0; dst < topology.endpoints(); ++dst) {
    std::vector<int>& sources = senders[static_cast<std::size_t>(dst)];
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    if (sources.empty()) continue;
    topology.routes_to(dst, sources, [&](int source, const std::vector<RouteHop>& hops) {
      route.clear();
      for (const RouteHop& hop : hops) {
        const auto id = static_cast<std::size_t>(hop.link);
        if (links[id] == nullptr) {
          const TopologyLink& l = topology.links()[id];
          links[id] = zone->create_split_duplex_link("L" + std::to_string(id), l.spec.bandwidth_Bps)
                          ->set_latency(l.spec.latency_s)
                          ->seal();
        }
        route.emplace_back(links[id], hop.a_to_b ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
      }
      zone->add_route(host_of[static_cast<std::size_t>(source)]->get_netpoint(),
                      host_of[static_cast<std::size_t>(dst)]->get_netpoint(), nullptr, nullptr, route, false);
    });
  }
  zone->seal();
}

// What the child sends after its int32 status 0.
static_assert(std::is_trivially_copyable_v<TransferRecord> && std::is_trivially_copyable_v<SpanRecord>,
              "trace records cross the pipe from the child as bytes");

struct ChildHeader {
  std::uint32_t ranks;
  double time_s;
  std::uint64_t messages;
  std::uint64_t bytes_sent;
  std::int32_t payload_checked;
  std::int32_t payload_ok;
  double payload_max_abs_error;
  double wall_s;
  double setup_wall_s;
  std::uint64_t peak_rss_bytes;
  std::uint64_t transfers;  // trace records that follow the finish times
  std::uint64_t spans;
};

void write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void send_error_to_parent(int fd, const std::string& message) {
  const std::int32_t status = 1;
  write_all(fd, &status, sizeof status);
  write_all(fd, message.data(), message.size());
}

void read_child_result(const std::string& bytes, int status, void* out, std::size_t size) {
  std::int32_t code = 0;
  if (bytes.size() < sizeof code) throw std::runtime_error(child_failure(status));
  std::memcpy(&code, bytes.data(), sizeof code);
  if (code != 0) throw std::runtime_error(bytes.substr(sizeof code));
  if (bytes.size() < sizeof code + size) throw std::runtime_error("simgrid executor: truncated result from the child");
  std::memcpy(out, bytes.data() + sizeof code, size);
}

// Runs inside the child process; returns the result for the parent. SimGrid aborts the process on a deadlock, so
// the deadlock callback reports it to the parent itself and ends the child.
// The engine's network model settings (see the header), before the platform is built.
void configure_engine(const SimGridOptions& o) {
  // (a library's sleeps until a message is seen may fall within SimGrid's precision of now: not worth a line each)
  xbt_log_control_set("s4u_actor.thresh:warning");
  // A rank's actor runs straight-line code over its ops: 1 MiB of stack each instead of SimGrid's 8 MiB, so that
  // thousands of ranks fit in the address space a process may have (8192 ranks: 8 GiB reserved, not 64)
  sg4::Engine::set_config("contexts/stack-size:" + std::to_string(actor_stack_kib));
  sg4::Engine::set_config(std::string("network/model:") + to_string(o.network_model));
  if (o.network_model == NetworkModel::cm02) {
    sg4::Engine::set_config(std::string("network/crosstraffic:") + (o.ack_crosstraffic ? "1" : "0"));
    // No TCP window bound. SimGrid 3.32 ignores a comm's own rate (Comm::set_rate) when TCP-gamma is 0, so where a
    // collective library may cap a protocol's rate the window is made too large to bind instead (same times).
    sg4::Engine::set_config(o.library.enabled() ? "network/TCP-gamma:1e30" : "network/TCP-gamma:0");
    sg4::Engine::set_config("surf/precision:1e-12");
  }
}

std::vector<sg4::Host*> build_platform(std::span<const Schedule* const> schedules, int ranks, const SimGridOptions& o) {
  std::vector<sg4::Host*> hosts;
  if (o.topology->is_star()) {
    build_star(ranks, o, hosts);
  } else {
    build_cluster(schedules, ranks, o, hosts);
  }
  if (!o.factors.empty()) {
    auto* model = sg4::Engine::get_instance()->get_netzone_root()->get_network_model();
    const std::vector<FactorRange> factors = o.factors;
    model->set_lat_factor_cb(
        [factors](double size, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>&,
                  const std::unordered_set<sg4::NetZone*>&) { return factors_for(factors, size).latency_factor; });
    model->set_bw_factor_cb(
        [factors](double size, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>&,
                  const std::unordered_set<sg4::NetZone*>&) { return factors_for(factors, size).bandwidth_factor; });
  }
  return hosts;
}

ExecutionResult simulate(const Schedule& s, const SimGridOptions& options, int result_fd) {
  const auto started = std::chrono::steady_clock::now();
  const Placed<SimGridOptions> placed(options, s.ranks);
  const SimGridOptions& o = placed.options;
  xbt_log_control_set("xbt_cfg.thresh:warning");
  int argc = 1;
  char name[] = "dtsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  configure_engine(o);
  const Schedule* const only[] = {&s};
  const std::vector<sg4::Host*> hosts = build_platform(only, s.ranks, o);

  Simulation sim{
      s, o, make_mailboxes(only, s.ranks, o), {}, std::vector<double>(static_cast<std::size_t>(s.ranks), 0.0), 0, {}};
  const auto p = static_cast<std::uint64_t>(s.ranks);
  ExecutionResult result;
  for (const Op& op : s.ops) {
    if (op.kind() != OpKind::send) continue;
    ++result.messages;
    result.bytes_sent += s.span_bytes(op.span());
  }
  if (o.real_payload) {
    sim.buffers.resize(p);
    for (int r = 0; r < s.ranks; ++r) {
      Payload& b = sim.buffers[static_cast<std::size_t>(r)];
      b.assign(s.bytes / 4, 0.0F);
      for (std::uint32_t c = 0; c < s.chunks.size(); ++c) {
        const int owner = initial_owner(s, r, c);  // -1: starts with zeros (helpers, chunks not yet received)
        if (owner < 0) continue;
        for (std::uint64_t e = s.chunks[c].offset_bytes / 4;
             e < (s.chunks[c].offset_bytes + s.chunks[c].size_bytes) / 4; ++e)
          b[e] = payload_value(o.payload_seed, owner, e);
      }
    }
  }
  result.setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  sg4::Engine::on_deadlock_cb([&sim, result_fd] {
    send_error_to_parent(result_fd, "simgrid executor: deadlock: " + std::to_string(sim.schedule.ranks - sim.finished) +
                                        " ranks never finished");
    ::_exit(0);
  });
  std::vector<sg4::ActorPtr> actors;
  for (int r = 0; r < s.ranks; ++r) {
    actors.push_back(sg4::Actor::create("rank" + std::to_string(r), hosts[static_cast<std::size_t>(r)],
                                        [&sim, r] { run_rank(sim, r); }));
  }
  // a permanent receiver makes SimGrid start every put at once (its eager mode); a collective library's messages
  // are eager (they go into the receiver's buffers)
  if (o.eager || segment_library_cost(o, s).active) {
    for (int r = 0; r < s.ranks; ++r) {
      for (const auto& [peer, mailbox] : sim.mailboxes[static_cast<std::size_t>(r)].in) {
        mailbox->set_receiver(actors[static_cast<std::size_t>(r)]);
      }
    }
  }
  engine.run();
  if (sim.finished != s.ranks) {
    throw std::runtime_error("simgrid executor: deadlock: " + std::to_string(s.ranks - sim.finished) +
                             " ranks never finished");
  }
  result.time_s = sg4::Engine::get_clock();
  result.rank_finish_s = sim.finish_s;
  result.trace = std::move(sim.trace);
  if (o.real_payload) {
    result.payload_checked = true;
    double worst = 0.0;
    std::vector<double> sums;  // the sum over participants of each element of the chunk, computed once per chunk
    for (std::uint32_t c = 0; c < s.chunks.size(); ++c) {
      const std::uint64_t first = s.chunks[c].offset_bytes / 4;
      const std::uint64_t last = (s.chunks[c].offset_bytes + s.chunks[c].size_bytes) / 4;
      sums.clear();
      for (int r = 0; r < s.participants; ++r) {
        const ExpectedChunk want = expected_chunk(s, r, c);
        if (want.kind == ExpectedChunk::Kind::anything) continue;
        if (want.kind == ExpectedChunk::Kind::sum_of_all && sums.empty()) {
          sums.assign(last - first, 0.0);
          for (int k = 0; k < s.participants; ++k) {
            for (std::uint64_t e = first; e < last; ++e)
              sums[e - first] += payload_value(o.payload_seed, k, e);
          }
        }
        for (std::uint64_t e = first; e < last; ++e) {
          const double expected = want.kind == ExpectedChunk::Kind::one_rank
                                      ? payload_value(o.payload_seed, want.rank, e)
                                      : sums[e - first];
          const double got = sim.buffers[static_cast<std::size_t>(r)][e];
          worst = std::max(worst, std::fabs(got - expected));
        }
      }
    }
    result.payload_max_abs_error = worst;
    result.payload_ok = worst == 0.0;
  }
  return result;
}

// Runs body(fd) in a forked child (SimGrid allows one engine per process and may abort) and returns what it wrote to
// fd; an exception in the child is sent back as an error record. `status` receives the child's wait status.
std::string run_in_child(const std::function<void(int)>& body, int& status) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("simgrid executor: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // or the child could write the parent's buffered output a second time
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("simgrid executor: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    try {
      body(fds[1]);
    } catch (const std::bad_alloc&) {
      send_error_to_parent(fds[1], "simgrid executor: out of memory (the simulation needed more than is available)");
    } catch (const std::exception& e) {
      send_error_to_parent(fds[1], e.what());
    }
    ::close(fds[1]);
    ::_exit(0);  // the child must not run the parent's exit handlers or destructors
  }
  ::close(fds[1]);
  std::string bytes = read_all(fds[0]);
  ::close(fds[0]);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return bytes;
}

std::string child_failure(int status) {
  return "simgrid executor: SimGrid stopped without a result (" +
         std::string(WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                         : "exit code " + std::to_string(WEXITSTATUS(status))) +
         "; SimGrid's own message is above)";
}

// A number from a /proc file (first line), or `fallback` where it cannot be read.
long long proc_number(const char* path, long long fallback) {
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return fallback;
  long long value = fallback;
  if (std::fscanf(f, "%lld", &value) != 1) value = fallback;
  std::fclose(f);
  return value;
}

long long mappings_in_use() {
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return 0;
  long long lines = 0;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f))
    lines += c == '\n' ? 1 : 0;
  std::fclose(f);
  return lines;
}

constexpr long long simgrid_own_mappings = 1024;  // its heap, platform and maestro (a margin, not measured)

std::string format_gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

// The address space this process may still take (ulimit -v less what it has), or -1 without a limit.
long long address_space_left() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
  const long long pages = proc_number("/proc/self/statm", 0);  // (its first number: the whole virtual size)
  return static_cast<long long>(limit.rlim_cur) - pages * ::sysconf(_SC_PAGESIZE);
}

}  // namespace simgrid_detail

using namespace simgrid_detail;

int simgrid_actor_limit() {
  const long long max_maps = proc_number("/proc/sys/vm/max_map_count", 65530);
  return static_cast<int>(std::max(0LL, (max_maps - mappings_in_use() - simgrid_own_mappings) / 2));
}

void check_simgrid_actors(int actors) {
  // each actor reserves its stack and a guard page of address space: under a limit (ulimit -v) SimGrid would abort
  // ("Failed to allocate stack")
  if (const long long left = address_space_left(); left >= 0) {
    const double need = static_cast<double>(actors) * (actor_stack_kib * 1024.0 + ::sysconf(_SC_PAGESIZE));
    constexpr double simgrid_own_bytes = 256.0 * 1024 * 1024;  // its heap and platform (a margin, not measured)
    if (need + simgrid_own_bytes > static_cast<double>(left)) {
      throw std::invalid_argument("simgrid executor: " + std::to_string(actors) + " actors reserve about " +
                                  format_gib(need) + " of address space for their stacks (" +
                                  std::to_string(actor_stack_kib / 1024) + " MiB and a guard page each), and " +
                                  format_gib(static_cast<double>(left)) +
                                  " are left under this process's limit (ulimit -v); SimGrid would abort");
    }
  }
  const int limit = simgrid_actor_limit();
  if (actors <= limit) return;
  throw std::invalid_argument("simgrid executor: " + std::to_string(actors) +
                              " actors are above this machine's limit of " + std::to_string(limit) +
                              " (each actor's stack and guard page take two of the " +
                              std::to_string(proc_number("/proc/sys/vm/max_map_count", 65530)) +
                              " memory mappings vm.max_map_count allows a process; SimGrid would abort)");
}

ExecutionResult run_simgrid(const Schedule& schedule, const SimGridOptions& options) {
  if (schedule.compact()) return run_simgrid(expand(schedule), options);  // its actors run every step written out
  if (std::string problem = check_well_formed(schedule); !problem.empty()) {
    throw std::invalid_argument("simgrid executor: " + problem);
  }
  check_simgrid_actors(schedule.ranks);
  if (!(options.cost.bandwidth_Bps > 0) || !(options.cost.reduce_Bps > 0) || !(options.cost.alpha_s >= 0) ||
      !(options.compute_flops_per_s > 0)) {
    throw std::invalid_argument("simgrid executor: bandwidth, reduce rate and compute speed must be > 0, latency >= 0");
  }
  if (options.record_trace && options.send_buffer_bytes > 0) {
    throw std::invalid_argument("simgrid executor: a trace is not recorded with a send buffer");
  }
  if (options.older_send_weight < 1 || options.older_send_weight > 16) {
    throw std::invalid_argument("simgrid executor: older_send_weight must be in [1, 16], got " +
                                std::to_string(options.older_send_weight));
  }
  if (options.topology == nullptr && !options.accelerator_of.empty() &&
      options.accelerator_of.size() != static_cast<std::size_t>(schedule.ranks)) {
    throw std::invalid_argument("simgrid executor: the schedule has " + std::to_string(schedule.ranks) + " ranks but " +
                                std::to_string(options.accelerator_of.size()) + " are placed on the star's hosts");
  }
  if (options.topology != nullptr) {
    if (options.accelerator_of.size() != static_cast<std::size_t>(schedule.ranks)) {
      throw std::invalid_argument("simgrid executor: the schedule has " + std::to_string(schedule.ranks) +
                                  " ranks but " + std::to_string(options.accelerator_of.size()) +
                                  " are placed on the cluster");
    }
    std::vector<char> used(static_cast<std::size_t>(options.topology->endpoints()), 0);
    for (int acc : options.accelerator_of) {  // (positions may share one: a collective library's channels)
      if (acc < 0 || acc >= options.topology->endpoints() ||
          (options.real_payload && used[static_cast<std::size_t>(acc)])) {
        throw std::invalid_argument("simgrid executor: placement must put each rank on an accelerator of the cluster" +
                                    std::string(options.real_payload ? ", one each with a real payload" : ""));
      }
      used[static_cast<std::size_t>(acc)] = 1;
    }
  }
  if (options.real_payload && schedule.bytes % 4 != 0) {
    throw std::invalid_argument("simgrid executor: real-payload mode needs a whole number of floats, got " +
                                std::to_string(schedule.bytes) + " bytes");
  }
  if (options.real_payload) {
    for (const Chunk& c : schedule.chunks) {  // spans are runs of chunks, so chunk boundaries suffice
      if (c.offset_bytes % 4 != 0 || c.size_bytes % 4 != 0) {
        throw std::invalid_argument("simgrid executor: real-payload mode needs chunks on 4-byte boundaries");
      }
    }
  }

  int status = 0;
  const std::string bytes = run_in_child(
      [&](int fd) {
        const auto started = std::chrono::steady_clock::now();
        const ExecutionResult r = simulate(schedule, options, fd);
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - started;
        const ChildHeader header{static_cast<std::uint32_t>(schedule.ranks),
                                 r.time_s,
                                 r.messages,
                                 r.bytes_sent,
                                 r.payload_checked ? 1 : 0,
                                 r.payload_ok ? 1 : 0,
                                 r.payload_max_abs_error,
                                 wall.count(),
                                 r.setup_wall_s,
                                 peak_rss_bytes(),
                                 r.trace.transfers.size(),
                                 r.trace.spans.size()};
        const std::int32_t ok = 0;
        write_all(fd, &ok, sizeof ok);
        write_all(fd, &header, sizeof header);
        write_all(fd, r.rank_finish_s.data(), r.rank_finish_s.size() * sizeof(double));
        write_all(fd, r.trace.transfers.data(), r.trace.transfers.size() * sizeof(TransferRecord));
        write_all(fd, r.trace.spans.data(), r.trace.spans.size() * sizeof(SpanRecord));
      },
      status);
  ChildHeader header;
  read_child_result(bytes, status, &header, sizeof header);
  ExecutionResult result;
  result.time_s = header.time_s;
  result.messages = header.messages;
  result.bytes_sent = header.bytes_sent;
  result.payload_checked = header.payload_checked != 0;
  result.payload_ok = header.payload_ok != 0;
  result.payload_max_abs_error = header.payload_max_abs_error;
  result.wall_s = header.wall_s;
  result.setup_wall_s = header.setup_wall_s;
  result.peak_rss_bytes = header.peak_rss_bytes;
  std::size_t at = sizeof(std::int32_t) + sizeof header;
  take_array(bytes, at, header.ranks, result.rank_finish_s);
  take_array(bytes, at, header.transfers, result.trace.transfers);
  take_array(bytes, at, header.spans, result.trace.spans);
  if (at != bytes.size())
    throw std::runtime_error("simgrid executor: trailing bytes in the result from the simulation");
  return result;
}

}  // namespace dtsim
