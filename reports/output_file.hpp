// Output files are written atomically: to a temporary file beside the target, then renamed over it, so a failed run
// leaves an earlier result intact.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace dtsim {

// Calls write(stream) into a temporary file, then renames it to `path`; throws std::runtime_error naming the path
// when the file cannot be written (the temporary file is removed). Temporaries of `path` that killed processes left
// behind (PATH.tmp<PID>, that process gone) are removed first.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace dtsim
