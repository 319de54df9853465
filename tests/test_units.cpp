#include <catch2/catch.hpp>
#include <cstdint>

#include "scenarios/units.hpp"

using namespace dtsim;

TEST_CASE("sizes parse with decimal and binary units") {
  CHECK(parse_bytes("0B") == 0);
  CHECK(parse_bytes("100MB") == 100000000ULL);
  CHECK(parse_bytes("64KiB") == 65536ULL);
  CHECK(parse_bytes("1.5GiB") == 1610612736ULL);
  CHECK(parse_bytes("1e3B") == 1000ULL);
  CHECK(parse_bytes("2TB") == 2000000000000ULL);
}

TEST_CASE("bad sizes are refused with the accepted form") {
  for (const char* bad : {"", "100", "100mb", "100 MB", "MB", "-5MB", "0.5B", "1.2.3MB", "100MBB", "1e400GB"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_bytes(bad), Catch::Contains("expected") && Catch::Contains("MB"));
  }
}

TEST_CASE("bandwidths parse in bits and bytes per second") {
  CHECK(parse_bandwidth_Bps("10Gbps") == Approx(1.25e9));
  CHECK(parse_bandwidth_Bps("25Gbps") == Approx(3.125e9));
  CHECK(parse_bandwidth_Bps("100Mbps") == Approx(12.5e6));
  CHECK(parse_bandwidth_Bps("10GBps") == Approx(10e9));
  CHECK(parse_bandwidth_Bps("8bps") == Approx(1.0));
  for (const char* bad : {"10", "10gbps", "10Gb/s", "0Gbps", "-1Gbps", "Gbps", "10 Gbps"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_bandwidth_Bps(bad), Catch::Contains("Gbps"));
  }
}

TEST_CASE("durations parse in s, ms, us, ns") {
  CHECK(parse_seconds("1us") == Approx(1e-6));
  CHECK(parse_seconds("0.5ms") == Approx(5e-4));
  CHECK(parse_seconds("2s") == Approx(2.0));
  CHECK(parse_seconds("100ns") == Approx(1e-7));
  CHECK(parse_seconds("0s") == 0.0);
  for (const char* bad : {"1", "1 us", "1sec", "-1us", "1µs", "us"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_seconds(bad), Catch::Contains("duration"));
  }
}

TEST_CASE("integers are whole and in range") {
  CHECK(parse_integer("8", 1, 10) == 8);
  for (const char* bad : {"0", "11", "8.0", "8x", "", " 8", "-3"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_integer(bad, 1, 10), Catch::Contains("[1, 10]"));
  }
}

TEST_CASE("sizes are exact and range-checked: whole numbers of bytes never overflow") {
  CHECK(parse_bytes("9007199254740993B", 0, UINT64_MAX) == 9007199254740993ULL);  // above 2^53: exact, not a double
  CHECK(parse_bytes("18446744073709551615B", 0, UINT64_MAX) == UINT64_MAX);
  CHECK(parse_bytes("1TiB", 1, 1ULL << 40) == 1ULL << 40);
  for (const char* bad : {"18446744073709551616B", "20000000TiB", "1e400B"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_bytes(bad, 0, UINT64_MAX), Catch::Contains("expected a whole number of bytes in [0B, "));
  }
  // the default range: up to 2^53 bytes
  CHECK_THROWS_WITH(parse_bytes("9223372036854775808B"), Catch::Contains("in [0B, 8192TiB]"));
  CHECK_THROWS_WITH(parse_bytes("2TB", 0, 1ULL << 40), Catch::Contains("in [0B, 1TiB]") && Catch::Contains("'2TB'"));
  CHECK_THROWS_WITH(parse_bytes("0B", 1, 100), Catch::Contains("in [1B, 100B]"));
}

TEST_CASE("bandwidths, durations and plain numbers are range-checked, and the ranges read in units") {
  CHECK(parse_bandwidth_Bps("1bps") == Approx(0.125));
  CHECK_THROWS_WITH(parse_bandwidth_Bps("1e300Gbps"), Catch::Contains("a bandwidth in [1bps, 1e+06TBps]"));
  CHECK_THROWS_WITH(parse_bandwidth_Bps("2000TBps", 1, 1e15), Catch::Contains("in [1Bps, 1000TBps]"));
  CHECK(parse_seconds("10s", 0, 10) == 10);
  CHECK_THROWS_WITH(parse_seconds("11s", 0, 10), Catch::Contains("a duration in [0s, 10s]"));
  CHECK_THROWS_WITH(parse_seconds("1e400s"), Catch::Contains("a duration in [0s, 1e+09s]"));
  CHECK(parse_number("0.1", 0, 1, true) == Approx(0.1));
  CHECK(parse_number("1e-3", 0, 1) == Approx(1e-3));
  CHECK(parse_number("-2", -5, 5) == -2);
  for (const char* bad : {"0", "1e400", "2", "", "0.1x", "inf", "nan", "-0.5", " 1", "1 "}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_number(bad, 0, 1, true), Catch::Contains("expected a number in (0, 1]"));
  }
  CHECK(bytes_text(0) == "0B");
  CHECK(bytes_text(1536) == "1536B");
  CHECK(bytes_text(1000000000000ULL) == "1TB");
  CHECK(bytes_text(1ULL << 40) == "1TiB");
  CHECK(bandwidth_text(0.125) == "1bps");
  CHECK(bandwidth_text(1e15) == "1000TBps");
  CHECK(seconds_text(1e-6) == "1us");
  CHECK(seconds_text(0) == "0s");
}
