#include "scenarios/input_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace dtsim {

std::string input_file_problem(const std::string& path) {
  if (path.empty()) return "'': cannot read the file (an empty path)";
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);  // follows links
  if (status.type() == std::filesystem::file_type::not_found) return path + ": cannot read the file (no such file)";
  if (ec) return path + ": cannot read the file (" + ec.message() + ")";
  if (status.type() == std::filesystem::file_type::directory) return path + ": is a directory, not a file";
  if (status.type() != std::filesystem::file_type::regular && status.type() != std::filesystem::file_type::fifo) {
    return path + ": not a regular file (a device or socket)";
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return path + ": cannot read the file (" + std::error_code(errno, std::generic_category()).message() + ")";
  }
  return "";
}

}  // namespace dtsim
