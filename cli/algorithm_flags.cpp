#include "cli/algorithm_flags.hpp"

#include <algorithm>
#include <set>

#include "algorithms/ring.hpp"

namespace dtsim::cli {
namespace {

// A text that lives as long as the program (a FlagSpec holds views).
std::string_view kept(std::string text) {
  static std::set<std::string, std::less<>> texts;
  return *texts.insert(std::move(text)).first;
}

// "a", "a and b", "a, b and c".
std::string join_and(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

std::vector<std::string> names_of(const std::vector<const AlgorithmInfo*>& infos) {
  std::vector<std::string> names;
  for (const AlgorithmInfo* info : infos)
    names.emplace_back(info->name);
  return names;
}

// Where an option is also read as an inner allreduce's: every allreduce-valued option ("hierarchical's --inter"),
// when some nestable allreduce declares the option (segment-size); nothing otherwise.
std::vector<std::string> nesting_uses(std::string_view option) {
  std::vector<std::string> uses;
  const bool inner_declares = std::any_of(algorithms().begin(), algorithms().end(), [&](const AlgorithmInfo& a) {
    return a.nestable() && a.option(option) != nullptr;
  });
  if (!inner_declares) return uses;
  for (const AlgorithmInfo& outer : algorithms()) {
    for (const OptionSpec& spec : outer.option_specs) {
      if (spec.kind == OptionKind::allreduce)
        uses.push_back(std::string(outer.name) + "'s --" + std::string(spec.name));
    }
  }
  return uses;
}

}  // namespace

std::string algorithm_flag_doc() {
  // collectives in order, those with the same algorithms named together
  const Collective order[] = {Collective::allreduce, Collective::reduce_scatter, Collective::allgather,
                              Collective::broadcast, Collective::reduce,         Collective::gather,
                              Collective::scatter,   Collective::alltoall};
  std::string doc;
  for (std::size_t i = 0; i < std::size(order);) {
    const std::string names = algorithm_names(order[i]);
    std::vector<std::string> collectives{to_string(order[i])};
    std::size_t j = i + 1;
    while (j < std::size(order) && algorithm_names(order[j]) == names)
      collectives.emplace_back(to_string(order[j++]));
    if (!names.empty()) doc += (doc.empty() ? "" : "; ") + join_and(collectives) + ": " + names;
    i = j;
  }
  return doc;
}

std::vector<FlagSpec> algorithm_option_flags() {
  std::vector<FlagSpec> flags;
  for (const OptionSpec* spec : declared_options()) {
    if (!spec->flag) continue;
    std::string doc;
    for (const AlgorithmInfo* info : algorithms_declaring(spec->name))
      doc += (doc.empty() ? "" : ", ") + std::string(info->name);
    doc += ": " + std::string(spec->doc);
    if (spec->kind == OptionKind::allreduce) doc += " (" + nestable_allreduce_names() + ")";
    flags.push_back({spec->name, spec->value_form, spec->default_text, kept(doc)});
  }
  return flags;
}

AlgorithmOptions parse_algorithm_options(const Flags& flags) {
  AlgorithmOptions options;
  for (const OptionSpec* spec : declared_options()) {
    // (only what the command line gives: an option left unset takes its default, and a library may choose it)
    if (!spec->flag || !flags.accepts(spec->name) || !flags.has(spec->name)) continue;
    switch (spec->kind) {
      case OptionKind::count:
        options.set(spec->name, static_cast<std::uint64_t>(flags.integer(spec->name, static_cast<long long>(spec->min),
                                                                         static_cast<long long>(spec->max))));
        break;
      case OptionKind::bytes: options.set(spec->name, flags.bytes(spec->name, spec->min, spec->max)); break;
      case OptionKind::choice: {
        std::vector<std::string_view> accepted;
        for (std::string_view choice : spec->choices) {
          if (!choice.empty()) accepted.push_back(choice);
        }
        options.set(spec->name, flags.choice(spec->name, accepted));
        break;
      }
      case OptionKind::allreduce:
        options.set(spec->name, flags.parse(spec->name, [](const std::string& v) {
          return std::string(find_nestable_allreduce(v).name);
        }));
        break;
    }
  }
  return options;
}

void check_option_flags(const Flags& flags, std::span<const AlgorithmInfo* const> chosen) {
  std::string names;
  for (const AlgorithmInfo* a : chosen)
    names += (names.empty() ? "" : ", ") + std::string(a->name);
  const std::string here = " (the chosen algorithm" + std::string(chosen.size() == 1 ? "" : "s") + ": " + names + ")";
  // an option is used when a chosen algorithm declares it, or names (with an allreduce-valued option, as given or by
  // default) an inner allreduce that does
  const auto uses = [&flags](const AlgorithmInfo& a, std::string_view option) {
    if (a.option(option) != nullptr) return true;
    for (const OptionSpec& spec : a.option_specs) {
      if (spec.kind != OptionKind::allreduce || !flags.accepts(spec.name)) continue;
      const std::string inner = flags.get(spec.name);
      if (std::any_of(algorithms().begin(), algorithms().end(), [&](const AlgorithmInfo& b) {
            return b.nestable() && b.name == inner && b.option(option) != nullptr;
          })) {
        return true;
      }
    }
    return false;
  };
  for (const OptionSpec* spec : declared_options()) {
    // (only what the command line gives: an option left unset takes its default, and a library may choose it)
    if (!spec->flag || !flags.accepts(spec->name) || !flags.has(spec->name)) continue;
    const bool used =
        std::any_of(chosen.begin(), chosen.end(), [&](const AlgorithmInfo* a) { return uses(*a, spec->name); });
    const std::vector<std::string> owners = names_of(algorithms_declaring(spec->name));
    const std::vector<std::string> nested = nesting_uses(spec->name);
    flags.refuse_unless(spec->name, used,
                        "only the " + join_and(owners) + (owners.size() == 1 ? " allreduce" : " allreduces") +
                            (nested.empty() ? "" : " (also as " + join_and(nested) + ")") + " " +
                            std::string(spec->used_for) + here);
  }
  // one ring has no order to rotate: a group given for it would change nothing (with a cluster, the library may run
  // one ring a NIC)
  if (flags.accepts(channel_group_option.name) && flags.has(channel_group_option.name)) {
    const bool one_ring = flags.has(channels_option.name)
                              ? flags.integer(channels_option.name, channels_option.min, channels_option.max) == 1
                              : !(flags.accepts("cluster") && flags.has("cluster"));
    flags.refuse_unless(
        channel_group_option.name, !one_ring,
        "only with several rings (--channels 2 or more, or --cluster, whose library runs a ring a NIC): "
        "one ring has no order to rotate");
  }
}

}  // namespace dtsim::cli
