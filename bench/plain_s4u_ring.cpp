// Reference for docs/benchmarks.md: ring allreduce written directly as plain s4u code, one actor per rank, one
// mailbox per (sender, receiver) pair, no schedule in between. dtsim's SimGrid executor is measured against it.
// usage: plain_s4u_ring RANKS BYTES [reduce]   (reduce: also run each step's reduction as an exec activity)
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RANKS BYTES [reduce]\n", argv[0]);
    return 2;
  }
  const int p = std::atoi(argv[1]);
  const double bytes = std::atof(argv[2]);
  const bool reduce = argc > 3;
  xbt_log_control_set("xbt_cfg.thresh:warning");
  int sg_argc = 1;
  sg4::Engine engine(&sg_argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  auto* zone = sg4::create_star_zone("star");
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < p; ++r) {
    sg4::Host* host = zone->create_host("h" + std::to_string(r), 10e9)->seal();
    const sg4::Link* link =
        zone->create_split_duplex_link("l" + std::to_string(r), 1.25e9)->set_latency(0.5e-6)->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    hosts.push_back(host);
  }
  zone->seal();
  const double chunk = bytes / p;
  for (int r = 0; r < p; ++r) {
    sg4::Actor::create("rank" + std::to_string(r), hosts[static_cast<std::size_t>(r)], [r, p, chunk, reduce] {
      sg4::Mailbox* out = sg4::Mailbox::by_name(std::to_string(r) + ">" + std::to_string((r + 1) % p));
      sg4::Mailbox* in = sg4::Mailbox::by_name(std::to_string((r + p - 1) % p) + ">" + std::to_string(r));
      static int token = 0;
      int* received = nullptr;
      for (int step = 0; step < 2 * (p - 1); ++step) {
        sg4::CommPtr send = out->put_async(&token, static_cast<std::uint64_t>(chunk));
        sg4::CommPtr recv = in->get_async<int>(&received);
        send->wait();
        recv->wait();
        if (reduce && step < p - 1) sg4::this_actor::execute(chunk);  // host speed 10e9: reduce at 10 GB/s, as dtsim
      }
    });
  }
  engine.run();
  std::printf("%.9f\n", sg4::Engine::get_clock());
  return 0;
}
