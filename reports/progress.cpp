#include "reports/progress.hpp"

#include <unistd.h>

#include <iostream>

#include "reports/format.hpp"

namespace dtsim {

ProgressLine::ProgressLine(std::string label, std::size_t total)
    : ProgressLine(std::move(label), total, total > 1 && ::isatty(STDERR_FILENO) == 1 ? &std::cerr : nullptr) {}

ProgressLine::ProgressLine(std::string label, std::size_t total, std::ostream* out)
    : label_(std::move(label)), total_(total), out_(out), started_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  if (out_ == nullptr || last_width_ == 0) return;
  *out_ << '\r' << std::string(last_width_, ' ') << '\r' << std::flush;
}

void ProgressLine::next(const std::string& what) {
  if (out_ == nullptr) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::string line = label_ + " " + std::to_string(done_ + 1) + "/" + std::to_string(total_) + " " + what + ", " +
                     format_seconds(elapsed) + " elapsed";
  if (done_ > 0) line += ", ~" + format_seconds(elapsed / static_cast<double>(done_) * (total_ - done_)) + " left";
  ++done_;
  std::string padded = line;
  if (padded.size() < last_width_) padded.append(last_width_ - padded.size(), ' ');
  last_width_ = line.size();
  *out_ << '\r' << padded << std::flush;
}

FractionLine::FractionLine(std::string label, bool enabled)
    : line_(std::move(label) + " (thousandths)", enabled ? 1000 : 0), started_(std::chrono::steady_clock::now()) {}

void FractionLine::update(double fraction) {
  if (std::chrono::steady_clock::now() - started_ < std::chrono::seconds(1)) return;
  for (const auto target = static_cast<std::size_t>(fraction * 1000); done_ < target; ++done_)
    line_.next("done");
}

}  // namespace dtsim
