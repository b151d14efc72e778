/*
 * Launch-time probe: the C side of launch-probe.ts, for cluster-compare.sh.
 * Every rank prints the wall-clock time (CLOCK_REALTIME, nanoseconds) at which
 * it got past MPI_Init; the script subtracts the time it started mpiexec and
 * keeps the latest rank. All "hosts" of the namespace cluster share this
 * machine's clock, so the times compare across hosts.
 *
 *   mpirun -n P build/launch-probe_mpich
 *   -> launch-probe: rank R of P past init at NS ns
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("launch-probe: rank %d of %d past init at %lld ns\n", rank, size,
           (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
