// dtsim-mpi-pingpong: MPI ping-pong over the message sizes given as arguments.
//   mpirun -np 2 dtsim-mpi-pingpong REPETITIONS SIZE...: between ranks 0 and 1; rank 0 prints "bytes seconds" per
//     size, the best one-way time (half a round trip) of the repetitions. Started by dtsim calibrate.
//   mpirun -np N dtsim-mpi-pingpong all REPETITIONS SIZE...: every rank at once, rank r with r + N/2 (N even), as
//     OSU's multi-pair latency test does; rank 0 prints per size the median one-way time over all pairs and
//     repetitions. The emulated cluster of dtsim validate runs it: its N ranks share this machine's cores, and a
//     message's time then includes waiting for a core.
//   mpirun -np N dtsim-mpi-pingpong exchange REPETITIONS SIZE...: every rank at once, rank r with r + N/2, each pair
//     sending both ways at the same time (MPI_Sendrecv, as OSU's bidirectional bandwidth test): N streams at once, as
//     many as a ring keeps busy; rank 0 prints per size the median time of one exchange over ranks and repetitions,
//     then the median over repetitions of the slowest rank's time (a step of a collective waits for its slowest pair).
//     What the machine that hosts an emulated cluster can carry in total (its cores copy every byte) shows here.
//   mpirun -np 2 dtsim-mpi-pingpong sendtime REPETITIONS SIZE...: how much of a message the transport buffers. Rank 1
//     posts its receive and sends an empty "ready" message (as dtsim-mpi-run does), rank 0 then sends SIZE bytes
//     (MPI_Isend, MPI_Wait) and waits for an empty "done" message rank 1 sends once it has everything. Rank 0 prints
//     per size the medians over repetitions of the time until its send was complete and until "done" came: a send is
//     complete while its last bytes are still in the transport's buffers, (1 - complete / done) x SIZE of them.
//   mpirun -np 3 dtsim-mpi-pingpong twosends REPETITIONS SIZE...: how two messages a rank sends one after the other
//     to two ranks share its link. Ranks 1 and 2 post their receives and send "ready"; rank 0 sends SIZE bytes to
//     rank 1 (MPI_Isend, MPI_Wait), then SIZE bytes to rank 2, and waits for the "done" each sends once it has
//     everything, timing each as it comes. Rank 0 prints per size the medians of: both sends' completion and both
//     "done" arrivals. Fair sharing of the link makes the first message arrive when the second does if both were
//     buffered at once; a first-in first-out link delivers the first at half that time.
//   mpirun -np 2 dtsim-mpi-pingpong msgrate REPETITIONS COUNT...: the per-message gap (LogGP's g). Rank 1 posts COUNT
//     receives of 8 bytes and sends "ready"; rank 0 then posts COUNT sends of 8 bytes at once (MPI_Isend, MPI_Waitall)
//     and waits for the "done" rank 1 sends once it has them all. Rank 0 prints per count the median over repetitions
//     of that time; the slope between two counts is what each further message of a step costs (dtsim validate and
//     calibrate fit g from it).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The receiving side of sendtime and twosends: post the receive, send an empty "ready" (tag 1) to rank 0, wait for
// the message, then send an empty "done" (tag 2).
void receive_and_report(std::vector<char>& buffer, long bytes) {
  MPI_Request request;
  MPI_Irecv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 0, 0, MPI_COMM_WORLD, &request);
  MPI_Send(nullptr, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Send(nullptr, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool exchange = argc > 1 && std::strcmp(argv[1], "exchange") == 0;
  const bool all = exchange || (argc > 1 && std::strcmp(argv[1], "all") == 0);
  const bool sendtime = argc > 1 && std::strcmp(argv[1], "sendtime") == 0;
  const bool twosends = argc > 1 && std::strcmp(argv[1], "twosends") == 0;
  const bool msgrate = argc > 1 && std::strcmp(argv[1], "msgrate") == 0;
  const int first = all || sendtime || twosends || msgrate ? 2 : 1;  // argv[first]: REPETITIONS
  const bool ranks_fit = all ? size >= 2 && size % 2 == 0 : size == (twosends ? 3 : 2);
  if (!ranks_fit || argc < first + 2) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "dtsim-mpi-pingpong: needs 2 ranks (3 with 'twosends', an even count with 'all' or 'exchange'), "
                   "REPETITIONS and sizes (message counts with 'msgrate')\n");
    }
    MPI_Finalize();
    return 2;
  }
  const int repetitions = std::max(1, std::atoi(argv[first]));
  std::vector<long> sizes;
  long largest = 1;
  for (int i = first + 1; i < argc; ++i) {
    sizes.push_back(std::atol(argv[i]));
    largest = std::max(largest, sizes.back());
  }
  std::vector<char> buffer(static_cast<std::size_t>(largest), 1);
  std::vector<char> incoming(exchange ? static_cast<std::size_t>(largest) : 0);
  const int half = size / 2;
  const bool pinger = rank < half;
  const int partner = pinger ? rank + half : rank - half;
  std::vector<double> gathered(static_cast<std::size_t>(size));
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  if (msgrate) {
    constexpr int message_bytes = 8;
    for (long count : sizes) {  // (the arguments are message counts here)
      const auto n = static_cast<std::size_t>(std::max(1L, count));
      std::vector<MPI_Request> requests(n);
      std::vector<char> slots(n * message_bytes, 1);
      std::vector<double> times;
      for (int r = 0; r < repetitions + 1; ++r) {  // the first round warms the connection up and is not counted
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
          MPI_Recv(nullptr, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          const double start = MPI_Wtime();
          for (std::size_t k = 0; k < n; ++k)
            MPI_Isend(slots.data() + k * message_bytes, message_bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &requests[k]);
          MPI_Waitall(static_cast<int>(n), requests.data(), MPI_STATUSES_IGNORE);
          MPI_Recv(nullptr, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (r > 0) times.push_back(MPI_Wtime() - start);
        } else if (rank == 1) {
          for (std::size_t k = 0; k < n; ++k)
            MPI_Irecv(slots.data() + k * message_bytes, message_bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &requests[k]);
          MPI_Send(nullptr, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
          MPI_Waitall(static_cast<int>(n), requests.data(), MPI_STATUSES_IGNORE);
          MPI_Send(nullptr, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
      }
      if (rank != 0) continue;
      std::printf("%ld %.9e\n", count, median(times));
      std::fflush(stdout);
    }
    MPI_Finalize();
    return 0;
  }
  if (twosends) {
    for (long bytes : sizes) {
      std::vector<double> complete[2], done[2];
      for (int r = 0; r < repetitions + 1; ++r) {  // the first round warms the connections up and is not counted
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
          for (int to = 1; to <= 2; ++to)
            MPI_Recv(nullptr, 0, MPI_BYTE, to, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          // one request list (the two "done" messages, then the send going on), so that a "done" is timed when it
          // comes, also while the second send is going on
          MPI_Request pending[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
          for (int to = 1; to <= 2; ++to)
            MPI_Irecv(nullptr, 0, MPI_BYTE, to, 2, MPI_COMM_WORLD, &pending[to - 1]);
          double sent[2] = {0, 0}, arrived[2] = {0, 0};
          const double start = MPI_Wtime();
          for (int to = 1; to <= 2; ++to) {
            MPI_Isend(buffer.data(), static_cast<int>(bytes), MPI_CHAR, to, 0, MPI_COMM_WORLD, &pending[2]);
            while (pending[2] != MPI_REQUEST_NULL) {
              int which = 0;
              MPI_Waitany(3, pending, &which, MPI_STATUS_IGNORE);
              (which == 2 ? sent[to - 1] : arrived[which]) = MPI_Wtime() - start;
            }
          }
          for (int k = 0; k < 2; ++k) {
            if (pending[k] == MPI_REQUEST_NULL) continue;
            MPI_Wait(&pending[k], MPI_STATUS_IGNORE);
            arrived[k] = MPI_Wtime() - start;
          }
          if (r == 0) continue;
          for (int k = 0; k < 2; ++k) {
            complete[k].push_back(sent[k]);
            done[k].push_back(arrived[k]);
          }
        } else {
          receive_and_report(buffer, bytes);
        }
      }
      if (rank != 0) continue;
      std::printf("%ld %.9e %.9e %.9e %.9e\n", bytes, median(complete[0]), median(complete[1]), median(done[0]),
                  median(done[1]));
      std::fflush(stdout);
    }
    MPI_Finalize();
    return 0;
  }
  if (sendtime) {
    for (long bytes : sizes) {
      std::vector<double> complete, done;
      for (int r = 0; r < repetitions + 1; ++r) {  // the first round warms the connection up and is not counted
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Request request;
        if (rank == 0) {
          MPI_Recv(nullptr, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          const double start = MPI_Wtime();
          MPI_Isend(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 1, 0, MPI_COMM_WORLD, &request);
          MPI_Wait(&request, MPI_STATUS_IGNORE);
          const double sent = MPI_Wtime();
          MPI_Recv(nullptr, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (r == 0) continue;
          complete.push_back(sent - start);
          done.push_back(MPI_Wtime() - start);
        } else if (rank == 1) {
          receive_and_report(buffer, bytes);
        }
      }
      if (rank != 0) continue;
      std::printf("%ld %.9e %.9e\n", bytes, median(complete), median(done));
      std::fflush(stdout);
    }
    MPI_Finalize();
    return 0;
  }
  for (long bytes : sizes) {
    double best = 1e30;
    std::vector<double> samples;
    std::vector<double> slowest;                 // per repetition, the slowest rank's time
    for (int r = 0; r < repetitions + 1; ++r) {  // the first round warms the connection up and is not counted
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      if (exchange) {
        MPI_Sendrecv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, partner, 0, incoming.data(),
                     static_cast<int>(bytes), MPI_CHAR, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (pinger) {
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, partner, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, partner, 0, MPI_COMM_WORLD);
      }
      const double one_way = (MPI_Wtime() - start) / (exchange ? 1 : 2);  // an exchange: both ways at once
      if (r == 0) continue;
      best = std::min(best, one_way);
      if (all) {
        MPI_Gather(&one_way, 1, MPI_DOUBLE, gathered.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        const auto counted = static_cast<std::ptrdiff_t>(exchange ? size : half);  // a ping-pong's partner measures the
        samples.insert(samples.end(), gathered.begin(), gathered.begin() + counted);  // same round trips
        slowest.push_back(*std::max_element(gathered.begin(), gathered.begin() + counted));
      }
    }
    if (rank != 0) continue;
    if (exchange) {
      std::printf("%ld %.9e %.9e\n", bytes, median(samples), median(slowest));
    } else if (all) {
      std::printf("%ld %.9e\n", bytes, median(samples));
    } else {
      std::printf("%ld %.9e\n", bytes, best);
    }
  }
  MPI_Finalize();
  return 0;
}
