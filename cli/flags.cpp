#include "cli/flags.hpp"

#include <unistd.h>

#include <algorithm>
#include <sstream>

namespace dtsim::cli {

Flags::Flags(std::span<const FlagSpec> specs, std::span<char* const> args) : specs_(specs) {
  for (const FlagSpec& s : specs) {
    // a table declared larger than its entries leaves nameless flags behind: a programming error, caught at once
    if (s.name.empty()) throw std::logic_error("flag table with an entry without a name");
  }
  std::string accepted;
  for (const FlagSpec& s : specs)
    accepted += (accepted.empty() ? "--" : ", --") + std::string(s.name);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (!arg.starts_with("--") || arg.size() == 2) {
      throw UsageError("unexpected argument '" + std::string(arg) + "' (accepted flags: " + accepted + ")");
    }
    std::string_view name = arg.substr(2);
    std::string value;
    bool inline_value = false;
    if (const auto eq = name.find('='); eq != std::string_view::npos) {
      value = std::string(name.substr(eq + 1));
      name = name.substr(0, eq);
      inline_value = true;
    }
    const auto it = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) { return s.name == name; });
    if (it == specs.end()) {
      throw UsageError("unknown flag --" + std::string(name) + " (accepted flags: " + accepted + ")");
    }
    if (values_.contains(name)) throw UsageError("--" + std::string(name) + " given twice");
    if (it->value_form.empty()) {
      if (inline_value) throw UsageError("--" + std::string(name) + " takes no value");
      value = "true";
    } else if (!inline_value) {
      if (i + 1 >= args.size()) {
        throw UsageError("--" + std::string(name) + " needs a value: " + std::string(it->value_form));
      }
      value = args[++i];
    }
    if (!it->value_form.empty() && value.empty()) {  // an empty path, list or number is never what was meant
      // what the flag accepts, from its help up to the first parenthesis: "number of ranks, 1 to 1000000"
      const std::string_view doc = it->doc.substr(0, std::min(it->doc.find(" ("), it->doc.size()));
      throw UsageError("--" + std::string(name) + ": expected " + std::string(it->value_form) +
                       (doc.empty() ? "" : " (" + std::string(doc) + ")") + ", got ''");
    }
    values_.emplace(std::string(name), std::move(value));
  }
}

const FlagSpec& Flags::spec(std::string_view name) const {
  for (const FlagSpec& s : specs_) {
    if (s.name == name) return s;
  }
  throw std::logic_error("flag --" + std::string(name) + " is not declared");
}

bool Flags::accepts(std::string_view name) const {
  for (const FlagSpec& s : specs_) {
    if (s.name == name) return true;
  }
  return false;
}

bool Flags::has(std::string_view name) const {
  spec(name);
  return values_.find(name) != values_.end();
}

std::string Flags::get(std::string_view name) const {
  const FlagSpec& s = spec(name);
  const auto it = values_.find(name);
  return it != values_.end() ? it->second : std::string(s.default_value);
}

std::string Flags::choice(std::string_view name, std::span<const std::string_view> accepted) const {
  std::string value = get(name);
  std::string list;
  std::size_t i = 0;
  for (std::string_view option : accepted) {
    if (option == value) return value;
    if (i > 0) list += i + 1 == accepted.size() ? " or " : ", ";
    list += option;
    ++i;
  }
  throw UsageError("--" + std::string(name) + ": expected " + list + ", got '" + value + "'");
}

long long Flags::integer(std::string_view name, long long min, long long max) const {
  return parse(name, [&](const std::string& v) { return parse_integer(v, min, max); });
}

std::uint64_t Flags::bytes(std::string_view name, std::uint64_t min, std::uint64_t max) const {
  return parse(name, [&](const std::string& v) { return parse_bytes(v, min, max); });
}

double Flags::seconds(std::string_view name, double min, double max) const {
  return parse(name, [&](const std::string& v) { return parse_seconds(v, min, max); });
}

double Flags::bandwidth_Bps(std::string_view name, double min, double max) const {
  return parse(name, [&](const std::string& v) { return parse_bandwidth_Bps(v, min, max); });
}

double Flags::number(std::string_view name, double min, double max, bool min_exclusive) const {
  return parse(name, [&](const std::string& v) { return parse_number(v, min, max, min_exclusive); });
}

void Flags::refuse_unless(std::string_view name, bool applies, const std::string& why) const {
  if (!applies && accepts(name) && has(name)) throw UsageError("--" + std::string(name) + ": " + why);
}

std::string flags_help(std::span<const FlagSpec> specs) {
  std::ostringstream out;
  for (const FlagSpec& s : specs) {
    std::string head("  --");
    head.append(s.name);
    if (!s.value_form.empty()) head.append(" ").append(s.value_form);
    out << head << std::string(head.size() < 30 ? 30 - head.size() : 1, ' ') << s.doc;
    if (!s.default_value.empty()) out << " (default " << s.default_value << ")";
    out << '\n';
  }
  return out.str();
}

}  // namespace dtsim::cli

namespace dtsim::cli {

std::string executable_directory() {
  char path[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  const std::string self(path, n > 0 ? static_cast<std::size_t>(n) : 0);
  return self.substr(0, self.rfind('/'));
}

}  // namespace dtsim::cli
