/* The reference for `faultline bench allreduce` in ci/bench: MPI_Allreduce of float32 sums,
 * measured and checked the way faultline measures and checks its ring. Rank r's element e is
 * r + e % 7 (small integers, so every sum is exact in float32); every element of every result
 * is checked. Each operation starts after a barrier; its time is the slowest rank's, and the
 * median over the iterations is printed as one JSON line per size:
 *   {"ranks": 2, "bytes": 1048576, "iterations": 20, "median_us": 812.4}
 * Usage: mpirun -n RANKS mpi_allreduce ITERATIONS WARMUP SIZE... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a;
  const double y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 4) {
    if (rank == 0) fprintf(stderr, "usage: mpi_allreduce ITERATIONS WARMUP SIZE...\n");
    MPI_Finalize();
    return 2;
  }
  const int iterations = atoi(argv[1]);
  const int warmup = atoi(argv[2]);
  double* seconds = malloc(sizeof(double) * (size_t)iterations);
  for (int arg = 3; arg < argc; ++arg) {
    const long bytes = atol(argv[arg]);
    const int count = (int)(bytes / (long)sizeof(float));
    float* data = malloc(sizeof(float) * (size_t)count);
    float* sum = malloc(sizeof(float) * (size_t)count);
    for (int i = 0; i < warmup + iterations; ++i) {
      for (int e = 0; e < count; ++e) data[e] = (float)(rank + e % 7);
      MPI_Barrier(MPI_COMM_WORLD);
      const double started = MPI_Wtime();
      MPI_Allreduce(data, sum, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double took = MPI_Wtime() - started;
      double slowest = 0;
      MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (i >= warmup) seconds[i - warmup] = slowest;
      const float base = (float)(size * (size - 1) / 2);
      for (int e = 0; e < count; ++e) {
        const float expected = base + (float)(size * (e % 7));
        if (sum[e] != expected) {
          fprintf(stderr, "mpi_allreduce: rank %d: element %d is %g, expected %g\n", rank, e,
                  sum[e], expected);
          MPI_Abort(MPI_COMM_WORLD, 3);
        }
      }
    }
    qsort(seconds, (size_t)iterations, sizeof(double), by_value);
    if (rank == 0)
      printf("{\"ranks\": %d, \"bytes\": %ld, \"iterations\": %d, \"median_us\": %.1f}\n", size,
             bytes, iterations, seconds[iterations / 2] * 1e6);
    fflush(stdout);
    free(data);
    free(sum);
  }
  free(seconds);
  MPI_Finalize();
  return 0;
}
