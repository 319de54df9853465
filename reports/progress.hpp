// A progress line for long sweeps: "label 3/40 ring 64 ranks 1 MB, 2.1 s elapsed, ~26 s left", rewritten in place on
// stderr when stderr is a terminal, and silent when it is not (pipes, files, CI logs).
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace dtsim {

class ProgressLine {
public:
  // Shows on std::cerr when stderr is a terminal and there is more than one item.
  ProgressLine(std::string label, std::size_t total);
  // Shows on `out` (nullptr: nowhere), e.g. for tests.
  ProgressLine(std::string label, std::size_t total, std::ostream* out);
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Call before starting item `what`: shows how many are done and an estimate of the time left.
  void next(const std::string& what);
  bool shown() const { return out_ != nullptr; }

private:
  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::ostream* out_;
  std::chrono::steady_clock::time_point started_;
  std::size_t last_width_ = 0;
};

// A ProgressLine of a long run's thousandths, fed with the fraction done, shown only once the run has lasted a second
// (a short run writes nothing).
class FractionLine {
public:
  // shown: as ProgressLine (stderr a terminal), and only when `enabled`
  FractionLine(std::string label, bool enabled);
  bool shown() const { return line_.shown(); }
  void update(double fraction);

private:
  ProgressLine line_;
  std::size_t done_ = 0;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace dtsim
