// Output files are written atomically: to a temporary file beside the target, then renamed over it, so a failed run
// leaves an earlier result intact.
#pragma once

#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dtsim {

// An output path that cannot be written (its folder missing or read-only, a disk full): the user's to fix, so the
// command line reports it as bad input (exit 2), naming the path.
struct OutputPathError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Calls write(stream) into a temporary file, then renames it to `path`; throws OutputPathError naming the path when
// the file cannot be written (the temporary file is removed). Temporaries of `path` that killed processes left
// behind (PATH.tmp<PID>, that process gone) are removed first. A path that exists and is not a plain file (a device
// such as /dev/stdout, a pipe) is written in place instead, and a folder is refused.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Files written together (a result's .json and .md): every path checked first (check_output_folder), then each written
// atomically, so that one that cannot be written leaves all of them as they were.
struct OutputFile {
  std::string path;
  std::function<void(std::ostream&)> write;
};
void write_files_atomically(const std::vector<OutputFile>& files);

// Throws OutputPathError when `path`'s folder does not exist or is not a folder, `path` is a folder, or no file can be
// created beside it (a read-only folder): checked before a long computation whose result would go there.
void check_output_folder(const std::string& path);

}  // namespace dtsim
