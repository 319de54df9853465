// dtsim-mpi-pingpong: MPI ping-pong between ranks 0 and 1 over the message sizes given as arguments; rank 0 prints
// "bytes seconds" per size, the best one-way time (half a round trip) of the repetitions. Started by dtsim calibrate
// through mpirun; usage: mpirun -np 2 dtsim-mpi-pingpong REPETITIONS SIZE...
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || argc < 3) {
    if (rank == 0) std::fprintf(stderr, "dtsim-mpi-pingpong: needs exactly 2 ranks, REPETITIONS and sizes\n");
    MPI_Finalize();
    return 2;
  }
  const int repetitions = std::max(1, std::atoi(argv[1]));
  std::vector<long> sizes;
  long largest = 1;
  for (int i = 2; i < argc; ++i) {
    sizes.push_back(std::atol(argv[i]));
    largest = std::max(largest, sizes.back());
  }
  std::vector<char> buffer(static_cast<std::size_t>(largest), 1);
  for (long bytes : sizes) {
    double best = 1e30;
    for (int r = 0; r < repetitions + 1; ++r) {  // the first round warms the connection up and is not counted
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
      const double one_way = (MPI_Wtime() - start) / 2;
      if (r > 0) best = std::min(best, one_way);
    }
    if (rank == 0) std::printf("%ld %.9e\n", bytes, best);
  }
  MPI_Finalize();
  return 0;
}
