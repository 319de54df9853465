#include "algorithms/transfer_matching.hpp"

#include <algorithm>
#include <limits>

namespace dtsim {

std::optional<MatchedTransfers> match_transfers(const Schedule& s) {
  const auto n = static_cast<std::size_t>(s.ranks);
  MatchedTransfers t;
  // the sends, by receiver: counted, then placed rank after rank (so by sender, then in order, within a receiver)
  t.first_into.assign(n + 1, 0);
  for (const Op& op : s.ops) {
    if (op.kind() == OpKind::send) ++t.first_into[static_cast<std::size_t>(op.peer()) + 1];
  }
  for (std::size_t d = 0; d < n; ++d)
    t.first_into[d + 1] += t.first_into[d];
  const std::uint64_t m = t.first_into[n];
  t.src.resize(m);
  t.dst.resize(m);
  t.src_step.resize(m);
  t.dst_step.resize(m);
  t.span.resize(m);
  std::vector<std::uint64_t> cursor(t.first_into.begin(), t.first_into.end() - 1);
  constexpr std::uint32_t before_first = std::numeric_limits<std::uint32_t>::max();  // (+1 wraps to step 0)
  for (std::uint32_t r = 0; r < n; ++r) {
    std::uint32_t step = before_first;
    for (const Op& op : s.rank_ops(static_cast<int>(r))) {
      if (op.starts_step()) ++step;
      if (op.kind() != OpKind::send) continue;
      const auto d = static_cast<std::size_t>(op.peer());
      const std::uint64_t at = cursor[d]++;
      t.src[at] = r;
      t.dst[at] = static_cast<std::uint32_t>(d);
      t.src_step[at] = step;
      t.span[at] = op.span();
    }
  }
  // each receiver's receives, by sender then in order: the k-th of a channel meets its k-th send
  struct Recv {
    std::uint32_t src;
    std::uint32_t step;
  };
  std::vector<Recv> recvs;
  for (std::uint32_t d = 0; d < n; ++d) {
    recvs.clear();
    std::uint32_t step = before_first;
    for (const Op& op : s.rank_ops(static_cast<int>(d))) {
      if (op.starts_step()) ++step;
      if (op.is_recv()) recvs.push_back({static_cast<std::uint32_t>(op.peer()), step});
    }
    const auto by_sender = [](const Recv& a, const Recv& b) { return a.src < b.src; };
    if (!std::is_sorted(recvs.begin(), recvs.end(), by_sender)) std::stable_sort(recvs.begin(), recvs.end(), by_sender);
    if (recvs.size() != t.first_into[d + 1] - t.first_into[d]) return std::nullopt;
    for (std::size_t k = 0; k < recvs.size(); ++k) {
      const std::uint64_t at = t.first_into[d] + k;
      if (recvs[k].src != t.src[at]) return std::nullopt;
      t.dst_step[at] = recvs[k].step;
    }
  }
  return t;
}

}  // namespace dtsim
