#include "reports/output_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace dtsim {

namespace {

// Temporaries of `path` that a killed process left (PATH.tmp<PID>, the process gone) are removed.
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + ".tmp";
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(entry.path(), error);
  }
}

// The temporary file beside `path` that this process writes before renaming it over `path`.
std::string temporary_of(const std::string& path) { return path + ".tmp" + std::to_string(::getpid()); }

// A target that exists and is not a plain file (a device such as /dev/stdout, a pipe) is written in place: renaming a
// file over it would replace it.
void write_in_place(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw OutputPathError(path + ": cannot write (" + std::strerror(errno) + ")");
  write(out);
  out.flush();
  if (!out) throw OutputPathError(path + ": write failed");
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::is_directory(status)) throw OutputPathError(path + ": cannot write (it is a folder)");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    write_in_place(path, write);
    return;
  }
  remove_stale_temporaries(path);
  const std::string temporary = temporary_of(path);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw OutputPathError(path + ": cannot write (" + std::strerror(errno) + ")");
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(temporary.c_str());
      throw;
    }
    out.flush();
    if (!out) {
      out.close();
      std::remove(temporary.c_str());
      throw OutputPathError(path + ": write failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw OutputPathError(path + ": cannot replace (" + reason + ")");
  }
}

void check_output_folder(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw OutputPathError(path + ": cannot write (no folder " + folder.string() + ")");
  }
  const fs::file_status status = fs::status(target, error);
  if (fs::is_directory(status)) throw OutputPathError(path + ": cannot write (it is a folder)");
  if (fs::exists(status)) return;  // (written in place or replaced: write_file_atomically says if it cannot)
  // a folder that exists may still refuse files (read-only, /proc): the temporary file the write will use, tried now
  const std::string temporary = temporary_of(path);
  {
    std::ofstream probe(temporary, std::ios::binary | std::ios::trunc);
    if (!probe) throw OutputPathError(path + ": cannot write (" + std::strerror(errno) + ")");
  }
  std::remove(temporary.c_str());
}

void write_files_atomically(const std::vector<OutputFile>& files) {
  for (const OutputFile& file : files)
    check_output_folder(file.path);
  for (const OutputFile& file : files)
    write_file_atomically(file.path, file.write);
}

}  // namespace dtsim
