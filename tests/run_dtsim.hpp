// Running the built dtsim binary (or any command line) from a test: its exit code and everything it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace dtsim::test {

struct Run {
  int exit_code;
  std::string output;  // stdout, and stderr where the command line redirects it
};

// Runs a shell command line, returning its exit code and standard output.
inline Run run_command(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr)
    output += buf.data();
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// Runs `dtsim ARGS` with stderr folded into the output.
inline Run run_dtsim(const std::string& args) { return run_command(std::string(DTSIM_BINARY) + " " + args + " 2>&1"); }

}  // namespace dtsim::test
