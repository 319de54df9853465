#include <catch2/catch.hpp>

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
