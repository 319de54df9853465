// Walks a Schedule under its semantics (see schedule.hpp): posts each rank's steps in order, matches the k-th send
// s->d with the k-th receive at d from s, and ends a step when all its transfers are matched. It knows nothing of
// what moves: a Handler gives meaning to sends, matches and step ends (contribution counts in the verifier, clocks in
// the analytical executor). Matching is FIFO per channel and therefore independent of timing, so one walk serves both.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "algorithms/schedule.hpp"

namespace dtsim {

// Well-formedness: op ranges for every rank, steps start properly, peers and chunks in range, no self-transfers.
// Compact schedules pass only with allow_compact (the flow executor). Returns the first problem, or an empty string.
std::string check_well_formed(const Schedule& schedule, bool allow_compact = false);

// "chunk 3" or "chunks 4-7", for messages.
std::string describe_span(const Schedule& schedule, std::uint32_t span);

struct WalkOutcome {
  std::string error;  // deadlock or unmatched transfer; empty on success
};

// Handler must provide:
//   std::uint32_t on_send_posted(std::size_t rank, const Op& send);            -> token carried by the message
//   void on_matched(std::size_t src, std::size_t dst, std::uint32_t token, const Op& send, const Op& recv);
//   void on_step_done(std::size_t rank, std::span<const Op> step);
//   bool failed() const;                                                       -> stop early
template <typename Handler>
WalkOutcome walk_schedule(const Schedule& schedule, Handler& handler);

// ---- implementation ----

namespace detail {

struct PendingSend {
  Op op;
  std::uint32_t token;
};

// A channel's queue: a vector read from `head`, emptied once read out. Most channels carry a message or two at a
// time, and a std::deque allocates a 512-byte block for the first (a parameter server's or direct's millions of
// channels took gigabytes).
template <typename T>
class Fifo {
public:
  bool empty() const { return head_ == items_.size(); }
  void push(const T& item) { items_.push_back(item); }
  T pop() {
    const T item = items_[head_];
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    }
    return item;
  }
  auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() const { return items_.end(); }

private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

struct WalkRank {
  std::uint64_t next = 0;
  std::uint64_t step_begin = 0;
  std::uint32_t outstanding = 0;
  bool finished = false;
};

// "rank 3 waits on recv-copy chunk 1 from 2; ..." for the first few unmatched transfers.
std::string describe_unmatched(std::span<const std::pair<std::size_t, std::string>> pending);

}  // namespace detail

template <typename Handler>
WalkOutcome walk_schedule(const Schedule& schedule, Handler& handler) {
  const auto p = static_cast<std::size_t>(schedule.ranks);
  std::vector<detail::WalkRank> ranks(p);
  struct Channel {
    detail::Fifo<detail::PendingSend> sends;
    detail::Fifo<Op> recvs;
  };
  std::unordered_map<std::uint64_t, Channel> channels;
  std::vector<std::size_t> ready;

  auto matched = [&](std::size_t src, std::size_t dst, const detail::PendingSend& send, const Op& recv) {
    handler.on_matched(src, dst, send.token, send.op, recv);
    for (std::size_t q : {src, dst}) {
      if (--ranks[q].outstanding == 0) ready.push_back(q);
    }
  };

  auto post_step = [&](std::size_t r) {
    detail::WalkRank& st = ranks[r];
    const auto ops = schedule.rank_ops(static_cast<int>(r));
    if (st.next >= ops.size()) {
      st.finished = true;
      return;
    }
    st.step_begin = st.next;
    std::uint64_t end = st.next;
    do {
      if (ops[end].kind() != OpKind::compute) ++st.outstanding;
      ++end;
    } while (end < ops.size() && !ops[end].starts_step());
    st.next = end;
    if (st.outstanding == 0) ready.push_back(r);
    for (std::uint64_t i = st.step_begin; i < end; ++i) {
      const Op& op = ops[i];
      if (op.kind() == OpKind::send) {
        const auto dst = static_cast<std::size_t>(op.peer());
        const detail::PendingSend send{op, handler.on_send_posted(r, op)};
        Channel& ch = channels[static_cast<std::uint64_t>(r) * p + dst];
        if (!ch.recvs.empty()) {
          matched(r, dst, send, ch.recvs.pop());
        } else {
          ch.sends.push(send);
        }
      } else if (op.is_recv()) {
        const auto src = static_cast<std::size_t>(op.peer());
        Channel& ch = channels[static_cast<std::uint64_t>(src) * p + r];
        if (!ch.sends.empty()) {
          matched(src, r, ch.sends.pop(), op);
        } else {
          ch.recvs.push(op);
        }
      }
    }
  };

  for (std::size_t r = 0; r < p && !handler.failed(); ++r)
    post_step(r);
  while (!ready.empty() && !handler.failed()) {
    const std::size_t r = ready.back();
    ready.pop_back();
    const auto ops = schedule.rank_ops(static_cast<int>(r));
    handler.on_step_done(r, ops.subspan(ranks[r].step_begin, ranks[r].next - ranks[r].step_begin));
    post_step(r);
  }
  if (handler.failed()) return {};
  // Under rendezvous a step with a send cannot end before the send is matched, so when every rank has finished no
  // send is left over: an unmatched send shows up as its sender blocked.
  if (std::all_of(ranks.begin(), ranks.end(), [](const detail::WalkRank& st) { return st.finished; })) return {};
  std::vector<std::pair<std::size_t, std::string>> pending;  // (waiting rank, what it waits on)
  for (const auto& [key, ch] : channels) {
    const std::size_t src = key / p, dst = key % p;
    for (const auto& send : ch.sends) {
      pending.emplace_back(src, "send " + describe_span(schedule, send.op.span()) + " to " + std::to_string(dst));
    }
    for (const Op& recv : ch.recvs) {
      pending.emplace_back(dst, std::string(to_string(recv.kind())) + " " + describe_span(schedule, recv.span()) +
                                    " from " + std::to_string(src));
    }
  }
  return {"deadlock or unmatched receive: " + detail::describe_unmatched(pending)};
}

}  // namespace dtsim
