// --library for `validate --published` and `calibrate --published`: the collective library of the multi-GPU rows'
// gradient allreduce on cluster files that name none.
#pragma once

#include <string>

#include "cli/flags.hpp"
#include "validation/published.hpp"

namespace dtsim::cli {

inline constexpr FlagSpec published_library_flag{
    "library", "NAME", "none",
    "--published: the collective library of the multi-GPU rows' gradient allreduce: nccl (what they ran: a ring a NIC "
    "in NCCL's protocols; cross-validated worse than none and much slower to fit, docs/validation.md) or none (plain "
    "messages, each node boundary crossed through one NIC: what the shipped device files were fitted with)"};

// default_published_mapping with --library applied; a UsageError naming --library for another value.
inline PublishedMapping published_mapping_from_flags(const Flags& flags, const std::string& data_dir) {
  PublishedMapping mapping = default_published_mapping(data_dir);
  const std::string library = flags.has("library") ? flags.get("library") : "none";
  if (library != "nccl" && library != "none") {
    throw UsageError("--library: expected nccl or none, got '" + library + "'");
  }
  mapping.multi_gpu_library = library == "none" ? "" : library;
  return mapping;
}

}  // namespace dtsim::cli
