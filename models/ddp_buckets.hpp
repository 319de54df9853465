// PyTorch DistributedDataParallel's gradient buckets: which gradients are allreduced together.
//
// DDP (torch/nn/parallel/distributed.py and the C++ Reducer, as in PyTorch 1.13 through 2.x) rebuilds its buckets after
// the first iteration in the order the gradients became ready in backward (about reverse registration order): it
// fills a bucket parameter by parameter and closes it once it holds at least its limit. The first bucket's limit is
// dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB), so that the first allreduce starts early; every later bucket's is
// bucket_cap_mb (default 25) MiB. What is left at the end is the last bucket. Recorded from PyTorch 1.13 for the
// validation models (tests/data/pytorch/ddp-buckets.json, validation/pytorch/record_ddp_buckets.py).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dtsim {

inline constexpr std::uint64_t ddp_first_bucket_bytes = 1ULL << 20;  // dist._DEFAULT_FIRST_BUCKET_BYTES
inline constexpr std::uint64_t ddp_bucket_cap_bytes = 25ULL << 20;   // bucket_cap_mb = 25

// The buckets of gradients of `bytes` (in the order they become ready): for each bucket, how many consecutive
// gradients it holds. A limit of 0 closes a bucket after every gradient.
std::vector<std::size_t> ddp_bucket_counts(std::span<const std::uint64_t> bytes, std::uint64_t first_limit_bytes,
                                           std::uint64_t limit_bytes);

}  // namespace dtsim
