// The one check every file dtsim reads goes through before it is opened: a directory, a device or a socket given as an
// input file is refused up front with a one-line message, never read (a directory "opens" and then throws deep inside
// the stream; /dev/zero would never end).
#pragma once

#include <string>

namespace dtsim {

// "" when `path` names a file dtsim can read as input: a regular file, or a pipe (`<(...)`, a FIFO). Otherwise the
// reason, naming the path: "PATH: cannot read the file (no such file)", "PATH: is a directory, not a file",
// "PATH: not a regular file (a device or socket)", "PATH: cannot read the file (permission denied)".
std::string input_file_problem(const std::string& path);

}  // namespace dtsim
