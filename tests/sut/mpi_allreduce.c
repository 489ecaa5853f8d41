/* A system under test for faultline's own tests: an MPI allreduce of COUNT doubles, repeated
 * ROUNDS times, every element checked against the sum the ranks expect. Prints "allreduce ok"
 * when every element of every round is right, "allreduce wrong" with the first wrong element
 * otherwise. An MPI error is returned (MPI_ERRORS_RETURN), printed with MPI's own text ("allreduce
 * failed: ... MPI_ERR_INTERN: internal error") and ends the rank with exit code 3: mpirun then
 * ends the others. (With the default MPI_ERRORS_ARE_FATAL, Open MPI 4.1's abort often loses the
 * rank's message before mpirun forwards it.) Then a token goes once around the ranks with MPI_Send
 * and MPI_Recv, each rank checking what it got: a small blocking send, which Open MPI's mtl ofi
 * posts as an inject (fi_tinjectdata), what a fault on inline sends acts on. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int count = argc > 1 ? atoi(argv[1]) : 262144; /* 2 MiB of doubles */
  const int rounds = argc > 2 ? atoi(argv[2]) : 4;
  double* data = malloc(sizeof(double) * (size_t)count);
  double* sum = malloc(sizeof(double) * (size_t)count);
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < count; ++i) data[i] = (double)((i * 7 + rank * 3 + round) % 13);
    const int status = MPI_Allreduce(data, sum, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (status != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(status, text, &length);
      fprintf(stderr, "allreduce failed: rank %d round %d: %s\n", rank, round, text);
      fflush(stderr);
      exit(3);
    }
    for (int i = 0; i < count; ++i) {
      double expected = 0;
      for (int r = 0; r < size; ++r) expected += (double)((i * 7 + r * 3 + round) % 13);
      if (sum[i] != expected) {
        printf("allreduce wrong: rank %d round %d element %d is %g, expected %g\n", rank, round, i,
               sum[i], expected);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
  }
  if (size > 1) {
    const int next = (rank + 1) % size;
    const int previous = (rank + size - 1) % size;
    int token = 1000 + rank;
    int got = -1;
    int status = MPI_SUCCESS;
    if (rank == 0) status = MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
    if (status == MPI_SUCCESS)
      status = MPI_Recv(&got, 1, MPI_INT, previous, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status == MPI_SUCCESS && rank != 0)
      status = MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
    if (status != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(status, text, &length);
      fprintf(stderr, "token failed: rank %d: %s\n", rank, text);
      fflush(stderr);
      exit(3);
    }
    if (got != 1000 + previous) {
      printf("allreduce wrong: rank %d got token %d, expected %d\n", rank, got, 1000 + previous);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  printf("allreduce ok: rank %d, %d rounds of %d doubles\n", rank, rounds, count);
  free(data);
  free(sum);
  MPI_Finalize();
  return 0;
}
