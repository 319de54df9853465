#include "sim/step_program.hpp"

#include <algorithm>

#include "algorithms/registry.hpp"
#include "sim/executor.hpp"

namespace dtsim {

const char* to_string(Stream stream) {
  switch (stream) {
    case Stream::compute: return "compute";
    case Stream::send_forward: return "send forward";
    case Stream::send_backward: return "send backward";
    case Stream::receive_forward: return "receive forward";
    case Stream::receive_backward: return "receive backward";
    case Stream::reduce: return "reduce";
    case Stream::gather: return "gather";
  }
  return "?";
}

void StepProgram::use_stream(Stream stream) {
  int& base = stream_base[static_cast<std::size_t>(stream)];
  if (base >= 0) return;
  base = units;
  units += ranks * (stream == Stream::reduce ? reduce_channels : 1);
}

std::size_t StepProgram::add_segment(Schedule segment) {
  owned_segments.push_back(std::move(segment));  // (a deque: earlier segments stay where they are)
  segments.push_back(&owned_segments.back());
  return segments.size() - 1;
}

void StepProgram::connect_stages(int stage, std::span<const std::pair<int, int>> pairs, std::uint64_t bytes) {
  const Schedule one = find_algorithm("tree", Collective::broadcast).build(2, bytes, AlgorithmOptions{});
  std::vector<int> forward, backward;
  for (const auto& [from, to] : pairs) {
    forward.insert(forward.end(), {unit(from, Stream::send_forward), unit(to, Stream::receive_forward)});
    backward.insert(backward.end(), {unit(to, Stream::send_backward), unit(from, Stream::receive_backward)});
  }
  const auto f = static_cast<std::int32_t>(add_segment(place_groups(one, forward, units)));
  const auto b = static_cast<std::int32_t>(add_segment(place_groups(one, backward, units)));
  StageStep& before = stages.at(static_cast<std::size_t>(stage));
  StageStep& after = stages.at(static_cast<std::size_t>(stage) + 1);
  before.send_forward_segment = f;
  after.receive_forward_segment = f;
  after.send_backward_segment = b;
  before.receive_backward_segment = b;
}

std::vector<PipeOp> stage_order(int stage, int stages, int m, PipelineSchedule schedule) {
  std::vector<PipeOp> order;
  if (schedule == PipelineSchedule::gpipe) {
    for (int i = 0; i < m; ++i)
      order.push_back({true, i});
    for (int i = m; i-- > 0;)
      order.push_back({false, i});
    return order;
  }
  const int warm = std::min(stages - stage - 1, m);
  for (int i = 0; i < warm; ++i)
    order.push_back({true, i});
  for (int i = 0; i < m - warm; ++i) {
    order.push_back({true, warm + i});
    order.push_back({false, i});
  }
  for (int i = m - warm; i < m; ++i)
    order.push_back({false, i});
  return order;
}

std::string check_step_program(const StepProgram& p) {
  if (p.ranks < 1) return "needs at least 1 rank";
  if (p.stages.empty()) return "needs at least 1 stage";
  if (!p.stage_of.empty() && p.stage_of.size() != static_cast<std::size_t>(p.ranks)) return "one stage per rank";
  for (const int s : p.stage_of) {
    if (s < 0 || static_cast<std::size_t>(s) >= p.stages.size()) return "a rank's stage is out of range";
  }
  if (p.micro_batches < 1 || p.steps < 1 || p.prefetch < 1) return "micro_batches, steps, prefetch >= 1";
  if (p.stages.size() > 1 && p.stage_of.empty()) return "several stages need stage_of";
  for (const Schedule* s : p.segments) {
    if (s == nullptr || s->ranks != p.units) return "every segment must be laid over the program's units";
  }
  auto valid = [&](std::int64_t segment, Stream stream) {
    return segment == no_segment || (segment >= 0 && static_cast<std::size_t>(segment) < p.segments.size() &&
                                     p.stream_base[static_cast<std::size_t>(stream)] >= 0);
  };
  for (std::size_t st = 0; st < p.stages.size(); ++st) {
    const StageStep& s = p.stages[st];
    for (const LayerStep& l : s.layers) {
      if (!(l.forward_s >= 0) || !(l.backward_s >= 0)) return "layer times must be >= 0";
      if (!valid(l.tensor_segment, Stream::compute)) return "a tensor segment is out of range";
      if (!(l.forward_overlap >= 0 && l.forward_overlap <= 1) || !(l.backward_overlap >= 0 && l.backward_overlap <= 1))
        return "a layer's overlaps must be in [0, 1]";
    }
    if (s.bucket_ready_after.size() != s.bucket_segment.size()) return "one ready layer per bucket";
    if (!s.gather_segment.empty() && s.gather_segment.size() != s.bucket_segment.size()) {
      return "one gather per bucket, or none";
    }
    if (std::string problem =
            check_transport_sharing(s.bucket_wire_s, s.bucket_segment.size(), s.compute_rate_while_transporting,
                                    s.transport_rate_while_computing);
        !problem.empty()) {
      return problem;
    }
    for (std::size_t b = 0; b < s.bucket_ready_after.size(); ++b) {
      if (s.bucket_ready_after[b] >= s.layers.size() ||
          (b > 0 && s.bucket_ready_after[b] > s.bucket_ready_after[b - 1])) {
        return "buckets must become ready in backward order";
      }
      if (!valid(static_cast<std::int64_t>(s.bucket_segment[b]), Stream::reduce))
        return "a bucket segment is out of range";
      if (!s.gather_segment.empty() && !valid(static_cast<std::int64_t>(s.gather_segment[b]), Stream::gather)) {
        return "a gather segment is out of range";
      }
    }
    if (!valid(s.send_forward_segment, Stream::send_forward) ||
        !valid(s.send_backward_segment, Stream::send_backward) ||
        !valid(s.receive_forward_segment, Stream::receive_forward) ||
        !valid(s.receive_backward_segment, Stream::receive_backward)) {
      return "a pipeline segment is out of range";
    }
    if (!(s.optimizer_s >= 0)) return "optimizer time must be >= 0";
  }
  return {};
}

}  // namespace dtsim
