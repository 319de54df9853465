// --library for `validate --published` and `calibrate --published`: the collective library of the multi-GPU rows'
// gradient allreduce on cluster files that name none.
#pragma once

#include <string>

#include "cli/flags.hpp"
#include "validation/published.hpp"

namespace dtsim::cli {

inline constexpr FlagSpec published_library_flag{
    "library", "NAME", "nccl-after-backward",
    "--published: the collective library of the multi-GPU rows' gradient allreduce: nccl (what they ran: a ring a NIC "
    "in NCCL's protocols; much slower to fit, docs/validation.md), nccl-after-backward (NCCL for the rows whose "
    "reduction overlaps nothing, plain messages for the rest: what the shipped device files were fitted with) or none "
    "(plain messages, each node boundary crossed through one NIC)"};

// default_published_mapping with --library applied; a UsageError naming --library for another value.
inline PublishedMapping published_mapping_from_flags(const Flags& flags, const std::string& data_dir) {
  PublishedMapping mapping = default_published_mapping(data_dir);
  if (!flags.has("library")) return mapping;
  const std::string library = flags.get("library");
  if (library == "nccl") {
    mapping.multi_gpu_library = PublishedLibrary::nccl;
  } else if (library == "nccl-after-backward") {
    mapping.multi_gpu_library = PublishedLibrary::nccl_after_backward;
  } else if (library == "none") {
    mapping.multi_gpu_library = PublishedLibrary::none;
  } else {
    throw UsageError("--library: expected nccl, nccl-after-backward or none, got '" + library + "'");
  }
  return mapping;
}

}  // namespace dtsim::cli
