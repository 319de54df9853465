#pragma once

#include <ostream>
#include <span>

namespace dtsim::cli {

// Each returns the process exit code: 0 success, 1 a run that failed its own checks. Bad input throws UsageError.
int collective_command(std::span<char* const> args, std::ostream& out);
int verify_command(std::span<char* const> args, std::ostream& out);
int compare_command(std::span<char* const> args, std::ostream& out);
int cluster_command(std::span<char* const> args, std::ostream& out);
int predict_command(std::span<char* const> args, std::ostream& out);
int train_command(std::span<char* const> args, std::ostream& out);
int calibrate_command(std::span<char* const> args, std::ostream& out);
int validate_command(std::span<char* const> args, std::ostream& out);
int explain_command(std::span<char* const> args, std::ostream& out);
int report_command(std::span<char* const> args, std::ostream& out);
int import_profile_command(std::span<char* const> args, std::ostream& out);
int draw_command(std::span<char* const> args, std::ostream& out);
int lesson_command(std::span<char* const> args, std::ostream& out);
const char* collective_usage();
const char* verify_usage();
const char* compare_usage();
const char* cluster_usage();
const char* cluster_file_help();
const char* predict_usage();
const char* scenario_file_help();
// Every field of a device file, and the built-in devices.
const char* device_file_help();
const char* model_file_help();
const char* train_usage();
const char* train_file_help();
const char* calibrate_usage();
const char* calibration_file_help();
const char* validate_usage();
const char* explain_usage();
const char* report_usage();
const char* import_profile_usage();
const char* draw_usage();
const char* lesson_usage();

}  // namespace dtsim::cli
