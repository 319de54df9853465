#include "algorithms/schedule.hpp"

#include "algorithms/options.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace dtsim {

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::send: return "send";
    case OpKind::recv_reduce: return "recv-reduce";
    case OpKind::recv_copy: return "recv-copy";
    case OpKind::compute: return "compute";
  }
  return "?";
}

const char* to_string(Collective collective) {
  switch (collective) {
    case Collective::allreduce: return "allreduce";
    case Collective::reduce_scatter: return "reduce-scatter";
    case Collective::allgather: return "allgather";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
    case Collective::gather: return "gather";
    case Collective::scatter: return "scatter";
    case Collective::alltoall: return "all-to-all";
  }
  return "?";
}

Op::Op(OpKind kind, int peer, std::uint32_t index) : index_(index) {
  if (peer < 0 || static_cast<std::uint32_t>(peer) > max_peer) {
    throw std::out_of_range("Op: peer rank " + std::to_string(peer) + " outside [0, " + std::to_string(max_peer) + "]");
  }
  bits_ = static_cast<std::uint32_t>(kind) | (static_cast<std::uint32_t>(peer) << 3);
}

std::vector<Chunk> split_even(std::uint64_t bytes, std::uint32_t parts, std::uint32_t element_bytes) {
  if (parts == 0) throw std::invalid_argument("split_even: zero parts");
  if (element_bytes == 0 || bytes % element_bytes != 0) {
    throw std::invalid_argument("split_even: " + std::to_string(bytes) + " bytes is not a whole number of " +
                                std::to_string(element_bytes) + "-byte elements");
  }
  const std::uint64_t elements = bytes / element_bytes;
  const std::uint64_t base = elements / parts;
  const std::uint64_t remainder = elements % parts;
  std::vector<Chunk> chunks(parts);
  std::uint64_t offset = 0;
  for (std::uint32_t i = 0; i < parts; ++i) {
    const std::uint64_t size = (base + (i < remainder ? 1 : 0)) * element_bytes;
    chunks[i] = Chunk{offset, size};
    offset += size;
  }
  return chunks;
}

std::vector<Chunk> buffer_chunks(std::uint64_t bytes, std::uint32_t parts, std::uint32_t element_bytes) {
  return bytes == 0 ? std::vector<Chunk>{} : split_even(bytes, parts, element_bytes);
}

std::vector<int> identity_blocks(std::uint32_t count) {
  std::vector<int> block(count);
  for (std::uint32_t c = 0; c < count; ++c)
    block[c] = static_cast<int>(c);
  return block;
}

std::uint32_t checked_ranks(const char* algorithm, int ranks) {
  if (ranks < 1) {
    throw std::invalid_argument(std::string(algorithm) + ": ranks must be >= 1, got " + std::to_string(ranks));
  }
  return static_cast<std::uint32_t>(ranks);
}

ScheduleBuilder::ScheduleBuilder(Collective collective, std::string algorithm, int ranks, std::uint64_t bytes,
                                 std::vector<Chunk> chunks) {
  if (ranks < 1) throw std::invalid_argument("schedule needs at least 1 rank, got " + std::to_string(ranks));
  schedule_.collective = collective;
  schedule_.algorithm = std::move(algorithm);
  schedule_.ranks = ranks;
  schedule_.participants = ranks;
  schedule_.bytes = bytes;
  schedule_.chunks = std::move(chunks);
  schedule_.spans.reserve(schedule_.chunks.size());
  for (std::uint32_t c = 0; c < schedule_.chunks.size(); ++c)
    schedule_.spans.push_back(Span{c, 1});
  schedule_.rank_begin.reserve(static_cast<std::size_t>(ranks) + 1);
}

namespace {

void check_op_count(const Schedule& s, std::uint64_t count) { ScheduleBuilder::check_ops(s.algorithm, s.ranks, count); }

}  // namespace

void ScheduleBuilder::check_ops(const std::string& algorithm, int ranks, std::uint64_t count) {
  if (count > max_ops) {
    throw std::invalid_argument(algorithm + " schedule for " + std::to_string(ranks) + " ranks needs " +
                                std::to_string(count) + " ops (" + std::to_string(count * sizeof(Op) >> 20) +
                                " MiB); at most " + std::to_string(max_ops) + " are supported");
  }
}

void ScheduleBuilder::reserve_ops(std::uint64_t count) {
  check_op_count(schedule_, count);
  schedule_.ops.reserve(count);
}

void ScheduleBuilder::set_participants(int count) {
  if (count < 1 || count > schedule_.ranks) {
    throw std::logic_error("ScheduleBuilder: " + std::to_string(count) + " participants among " +
                           std::to_string(schedule_.ranks) + " ranks");
  }
  schedule_.participants = count;
}

void ScheduleBuilder::set_chunk_blocks(std::vector<int> block) {
  if (block.size() != schedule_.chunks.size()) throw std::logic_error("ScheduleBuilder: one block per chunk needed");
  schedule_.chunk_block = std::move(block);
}

void ScheduleBuilder::set_root(int root) {
  if (root < 0 || root >= schedule_.participants) {
    throw OptionError("root", "expected a rank in [0, " + std::to_string(schedule_.participants - 1) + "], got " +
                                  std::to_string(root));
  }
  schedule_.root = root;
}

void ScheduleBuilder::begin_rank(int rank) {
  if (rank != current_rank_ + 1) throw std::logic_error("ScheduleBuilder: ranks must be built in order");
  current_rank_ = rank;
  schedule_.rank_begin.push_back(schedule_.ops.size());
  step_open_ = false;
}

void ScheduleBuilder::add(Op op) {
  if (current_rank_ < 0) throw std::logic_error("ScheduleBuilder: add before begin_rank");
  if (!step_open_) {
    op.mark_step_start();
    step_open_ = true;
    step_first_ = schedule_.ops.size();
  }
  schedule_.ops.push_back(op);
}

void ScheduleBuilder::repeat_step(std::uint32_t count, std::uint32_t stride, std::uint32_t base, std::uint32_t modulus,
                                  bool lockstep) {
  if (!step_open_) throw std::logic_error("ScheduleBuilder: repeat_step without a step");
  if (modulus == 0 || static_cast<std::uint64_t>(base) + modulus > schedule_.chunks.size()) {
    throw std::logic_error("ScheduleBuilder: repeat_step rotates chunks outside the buffer");
  }
  const std::uint64_t first = step_first_, end = schedule_.ops.size();
  for (std::uint64_t i = first; i < end; ++i) {
    const Op& op = schedule_.ops[i];
    if (op.kind() == OpKind::compute || op.span() < base || op.span() >= base + modulus) {
      throw std::logic_error("ScheduleBuilder: repeat_step over an op that is not a single chunk in the rotation");
    }
  }
  step_open_ = false;  // the next op starts a step of its own
  if (count > 0) schedule_.repeats.push_back(StepRepeat{first, count, stride, base, modulus, lockstep});
}

std::size_t Schedule::first_repeat_from(std::uint64_t op) const {
  return static_cast<std::size_t>(std::lower_bound(repeats.begin(), repeats.end(), op,
                                                   [](const StepRepeat& a, std::uint64_t o) { return a.op < o; }) -
                                  repeats.begin());
}

std::uint64_t expanded_op_count(const Schedule& s) {
  std::uint64_t count = s.ops.size();
  for (const StepRepeat& r : s.repeats) {
    std::uint64_t end = r.op + 1;  // the repeated step's ops: up to the next step's start (or the rank's end)
    while (end < s.ops.size() && !s.ops[end].starts_step())
      ++end;
    count += (end - r.op) * r.count;
  }
  return count;
}

std::uint64_t expanded_send_count(const Schedule& s) {
  std::uint64_t count = 0;
  std::size_t next_repeat = 0;
  std::uint64_t times = 1;  // how often the step op i is in runs
  for (std::uint64_t i = 0; i < s.ops.size(); ++i) {
    const Op op = s.ops[i];
    if (op.starts_step()) {
      times = 1;
      while (next_repeat < s.repeats.size() && s.repeats[next_repeat].op < i)
        ++next_repeat;
      if (next_repeat < s.repeats.size() && s.repeats[next_repeat].op == i) times += s.repeats[next_repeat].count;
    }
    if (op.kind() == OpKind::send) count += times;
  }
  return count;
}

RankTraffic rank_traffic(const Schedule& s, int rank) {
  RankTraffic t;
  const std::uint64_t begin = s.rank_begin[static_cast<std::size_t>(rank)];
  const std::uint64_t end = s.rank_begin[static_cast<std::size_t>(rank) + 1];
  std::size_t next_repeat = s.first_repeat_from(begin);
  const StepRepeat* repeat = nullptr;  // the repeat of the step op i is in (null: none)
  for (std::uint64_t i = begin; i < end; ++i) {
    const Op op = s.ops[i];
    if (op.starts_step()) {
      repeat = nullptr;
      if (next_repeat < s.repeats.size() && s.repeats[next_repeat].op == i) repeat = &s.repeats[next_repeat++];
    }
    if (op.kind() == OpKind::compute) continue;
    std::uint64_t bytes = s.span_bytes(op.span());
    if (repeat != nullptr) {
      for (std::uint32_t k = 1; k <= repeat->count; ++k)
        bytes += s.span_bytes(repeat->shifted(op.span(), k));
    }
    (op.kind() == OpKind::send ? t.sent_bytes : t.received_bytes) += bytes;
  }
  return t;
}

void check_expanded_size(const Schedule& s) { check_op_count(s, expanded_op_count(s)); }

Schedule with_arrivals(const Schedule& s, std::span<const double> arrival_flops) {
  if (arrival_flops.size() != static_cast<std::size_t>(s.ranks)) {
    throw std::invalid_argument("with_arrivals: one arrival per rank");
  }
  Schedule out = s;
  out.ops.clear();
  out.ops.reserve(s.ops.size() + static_cast<std::size_t>(s.ranks));
  out.rank_begin.assign(1, 0);
  for (int r = 0; r < s.ranks; ++r) {
    out.compute_flops.push_back(arrival_flops[static_cast<std::size_t>(r)]);
    Op arrival = Op::compute(static_cast<std::uint32_t>(out.compute_flops.size() - 1));
    arrival.mark_step_start();
    out.ops.push_back(arrival);
    const auto ops = s.rank_ops(r);
    out.ops.insert(out.ops.end(), ops.begin(), ops.end());
    out.rank_begin.push_back(out.ops.size());
  }
  // a repeat's step moved by one op for its rank and every rank before it
  for (StepRepeat& repeat : out.repeats) {
    const auto rank = std::upper_bound(s.rank_begin.begin(), s.rank_begin.end(), repeat.op) - s.rank_begin.begin();
    repeat.op += static_cast<std::uint64_t>(rank);
    repeat.lockstep = false;  // (ranks that arrive apart do not repeat their steps together)
  }
  return out;
}

Schedule expand(const Schedule& s) {
  if (!s.compact()) return s;
  const std::uint64_t total = expanded_op_count(s);
  check_op_count(s, total);
  Schedule out = s;
  out.repeats.clear();
  out.ops.clear();
  out.ops.reserve(total);
  out.rank_begin.assign(1, 0);
  std::size_t next = 0;
  for (int r = 0; r < s.ranks; ++r) {
    const std::uint64_t last = s.rank_begin[static_cast<std::size_t>(r) + 1];
    for (std::uint64_t i = s.rank_begin[static_cast<std::size_t>(r)]; i < last;) {
      std::uint64_t end = i + 1;
      while (end < last && !s.ops[end].starts_step())
        ++end;
      const StepRepeat* repeat = next < s.repeats.size() && s.repeats[next].op == i ? &s.repeats[next++] : nullptr;
      const std::uint32_t count = repeat != nullptr ? repeat->count : 0;
      for (std::uint32_t k = 0; k <= count; ++k) {
        for (std::uint64_t j = i; j < end; ++j) {
          const Op op = s.ops[j];
          if (k == 0 || op.kind() == OpKind::compute) {
            out.ops.push_back(op);
            continue;
          }
          out.ops.push_back(op.with(op.peer(), repeat->shifted(op.span(), k)));
        }
      }
      i = end;
    }
    out.rank_begin.push_back(out.ops.size());
  }
  return out;
}

std::uint32_t ScheduleBuilder::add_compute(double flops) {
  schedule_.compute_flops.push_back(flops);
  return static_cast<std::uint32_t>(schedule_.compute_flops.size() - 1);
}

std::uint32_t ScheduleBuilder::add_span(std::uint32_t first, std::uint32_t count) {
  if (count == 0 || static_cast<std::uint64_t>(first) + count > schedule_.chunks.size()) {
    throw std::logic_error("ScheduleBuilder: span of " + std::to_string(count) + " chunks from " +
                           std::to_string(first) + " outside the " + std::to_string(schedule_.chunks.size()) +
                           " chunks");
  }
  if (count == 1) return first;
  const std::uint64_t key = static_cast<std::uint64_t>(first) << 32 | count;
  if (const auto it = span_index_.find(key); it != span_index_.end()) return it->second;
  schedule_.spans.push_back(Span{first, count});
  const auto index = static_cast<std::uint32_t>(schedule_.spans.size() - 1);
  span_index_.emplace(key, index);
  return index;
}

Schedule ScheduleBuilder::finish() {
  if (current_rank_ + 1 != schedule_.ranks) {
    throw std::logic_error("ScheduleBuilder: built " + std::to_string(current_rank_ + 1) + " of " +
                           std::to_string(schedule_.ranks) + " ranks");
  }
  schedule_.rank_begin.push_back(schedule_.ops.size());
  return std::move(schedule_);
}

Schedule place_groups(const Schedule& s, std::span<const int> unit_of, int units) {
  if (s.ranks < 1 || unit_of.size() % static_cast<std::size_t>(s.ranks) != 0) {
    throw std::invalid_argument("place_groups: the placement must hold whole copies of the schedule's ranks");
  }
  if (units < 0 || static_cast<std::uint64_t>(units) > Op::max_peer) {
    throw std::invalid_argument("place_groups: too many units");
  }
  const std::size_t copies = unit_of.size() / static_cast<std::size_t>(s.ranks);
  if (s.ops.size() * copies > ScheduleBuilder::max_ops) {
    throw std::invalid_argument("place_groups: the copies would exceed " + std::to_string(ScheduleBuilder::max_ops) +
                                " ops");
  }
  std::vector<std::int64_t> slot(static_cast<std::size_t>(units), -1);  // unit -> index into unit_of
  for (std::size_t i = 0; i < unit_of.size(); ++i) {
    const int u = unit_of[i];
    if (u < 0 || u >= units || slot[static_cast<std::size_t>(u)] >= 0) {
      throw std::invalid_argument("place_groups: unit " + std::to_string(u) + " is out of range or used twice");
    }
    slot[static_cast<std::size_t>(u)] = static_cast<std::int64_t>(i);
  }
  Schedule out = s;
  out.ranks = units;
  out.participants = units;
  out.ops.clear();
  out.ops.reserve(s.ops.size() * copies);
  out.rank_begin.assign(1, 0);
  out.repeats.clear();
  for (int u = 0; u < units; ++u) {
    if (const std::int64_t i = slot[static_cast<std::size_t>(u)]; i >= 0) {
      const std::size_t base =
          static_cast<std::size_t>(i) - static_cast<std::size_t>(i) % static_cast<std::size_t>(s.ranks);
      const int p = static_cast<int>(static_cast<std::size_t>(i) - base);
      const std::uint64_t from = s.rank_begin[static_cast<std::size_t>(p)];
      const std::uint64_t to = s.rank_begin[static_cast<std::size_t>(p) + 1];
      const std::uint64_t shift = out.ops.size();
      for (std::uint64_t k = from; k < to; ++k) {
        const Op op = s.ops[k];
        out.ops.push_back(op.kind() == OpKind::compute
                              ? op
                              : op.with(unit_of[base + static_cast<std::size_t>(op.peer())], op.span()));
      }
      for (std::size_t r = s.first_repeat_from(from); r < s.repeats.size() && s.repeats[r].op < to; ++r) {
        StepRepeat repeat = s.repeats[r];
        repeat.op = repeat.op - from + shift;
        out.repeats.push_back(repeat);
      }
    }
    out.rank_begin.push_back(out.ops.size());
  }
  return out;
}

Schedule replicate_groups(const Schedule& s, int groups) {
  if (groups < 1) throw std::invalid_argument("replicate_groups: needs at least 1 group");
  if (groups == 1) return s;
  const auto total = static_cast<std::uint64_t>(s.ranks) * static_cast<std::uint64_t>(groups);
  if (total > Op::max_peer) throw std::invalid_argument("replicate_groups: too many ranks");
  if (s.ops.size() * static_cast<std::uint64_t>(groups) > ScheduleBuilder::max_ops) {
    throw std::invalid_argument("replicate_groups: the copies would exceed " +
                                std::to_string(ScheduleBuilder::max_ops) + " ops");
  }
  Schedule out = s;
  out.ranks = static_cast<int>(total);
  out.participants = static_cast<int>(total);
  out.ops.clear();
  out.ops.reserve(s.ops.size() * static_cast<std::size_t>(groups));
  out.rank_begin.assign(1, 0);
  for (int g = 0; g < groups; ++g) {
    const int shift = g * s.ranks;
    for (int r = 0; r < s.ranks; ++r) {
      for (const Op& op : s.rank_ops(r)) {
        out.ops.push_back(op.kind() == OpKind::compute ? op : op.with(op.peer() + shift, op.span()));
      }
      out.rank_begin.push_back(out.ops.size());
    }
  }
  out.repeats.clear();
  for (int g = 0; g < groups; ++g) {
    for (StepRepeat repeat : s.repeats) {
      repeat.op += static_cast<std::uint64_t>(g) * s.ops.size();
      out.repeats.push_back(repeat);
    }
  }
  return out;
}

}  // namespace dtsim
