#include "calibrate/network.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace dtsim {

std::vector<long> pingpong_sizes(long max_bytes) {
  std::vector<long> sizes;
  for (long s = 1; s <= max_bytes; s *= 2) {
    sizes.push_back(s);
    if (s >= 1024 && s + s / 2 <= max_bytes) sizes.push_back(s + s / 2);
  }
  return sizes;
}

std::vector<Sample> run_mpi_pingpong(const std::string& pingpong_binary, const std::vector<long>& sizes,
                                     int repetitions, int timeout_s, const std::string& mode) {
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) {
    throw CalibrationInputError(
        "mpirun: not found; install Debian's openmpi-bin package (apt-get install openmpi-bin libopenmpi-dev), or "
        "give measured samples with --network-csv");
  }
  if (!std::filesystem::exists(pingpong_binary)) {
    throw CalibrationInputError(pingpong_binary + ": the ping-pong program was not built (rebuild dtsim)");
  }
  std::ostringstream command;
  if (::geteuid() == 0) command << "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  command << "timeout " << timeout_s << " mpirun --oversubscribe -np 2 " << pingpong_binary << ' ';
  if (!mode.empty()) command << mode << ' ';
  command << repetitions;
  for (long s : sizes)
    command << ' ' << s;
  command << " 2>&1";
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.str().c_str(), "r"), ::pclose);
  if (!pipe) throw std::runtime_error("mpirun: cannot start");
  std::string output;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe.get()) != nullptr)
    output += buffer.data();
  std::vector<Sample> samples;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    double bytes = 0;
    double seconds = 0;
    if (fields >> bytes >> seconds) samples.push_back(Sample{bytes, seconds});
  }
  if (samples.size() != sizes.size()) {
    std::string first_line = output.substr(0, output.find('\n'));
    throw std::runtime_error("mpirun ping-pong failed (" + std::to_string(samples.size()) + " of " +
                             std::to_string(sizes.size()) + " sizes measured): " + first_line);
  }
  return samples;
}

namespace {

// A CSV header of the two columns: two non-empty names, neither a number (a line with another separator, one field or
// a number in it is a malformed sample, not a header).
bool is_header(const std::string& line) {
  const auto comma = line.find(',');
  if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos) return false;
  for (const std::string& field : {line.substr(0, comma), line.substr(comma + 1)}) {
    if (field.find_first_not_of(" \t") == std::string::npos) return false;
    char* end = nullptr;
    std::strtod(field.c_str(), &end);
    if (end != field.c_str()) return false;  // (it starts with a number)
  }
  return true;
}

}  // namespace

std::vector<Sample> read_samples_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CalibrationInputError(path + ": cannot read the file");
  std::vector<Sample> samples;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const auto comma = line.find(',');
    char* end = nullptr;
    const std::string first = line.substr(0, comma);
    const double bytes = std::strtod(first.c_str(), &end);
    const bool first_ok = end != first.c_str() && *end == '\0';
    if (number == 1 && !first_ok && is_header(line)) continue;  // a header: two names, like bytes,seconds
    double seconds = 0;
    bool ok = first_ok && comma != std::string::npos;
    if (ok) {
      const std::string second = line.substr(comma + 1);
      seconds = std::strtod(second.c_str(), &end);
      ok = end != second.c_str() && *end == '\0';
    }
    if (!ok || !(bytes >= 0) || !(seconds > 0)) {
      throw CalibrationInputError(path + ":" + std::to_string(number) +
                                  ": expected \"bytes,seconds\" with bytes >= 0 and seconds > 0, got \"" + line + "\"");
    }
    samples.push_back(Sample{bytes, seconds});
  }
  if (samples.empty()) throw CalibrationInputError(path + ": no samples");
  return samples;
}

}  // namespace dtsim
