/*
 * Multithreaded neighbor message rate, pair layout: the C reference for
 * ../src/msgrate-threads.ts (same kernel, flags and output line), for Open MPI
 * and MPICH with MPI_THREAD_MULTIPLE and pthreads.
 *
 * Source: papers/multichannel-parallel-queues.txt section 4 (Figure 1), the
 * kernel of msgrate.c. Two processes, N threads each; thread i of rank 0 and
 * thread i of rank 1 are peers and use tag i, so thread i only matches thread
 * i (the tsmpi benchmark's tag layout; C MPIs have no endpoints). Each thread
 * runs WARMUP untimed iterations, the threads of both processes meet (a
 * pthread barrier around one MPI_Barrier), then ITERATIONS timed ones.
 * Rank 0 prints the aggregate: messages its threads sent / the longest
 * thread's time.
 *
 *   mpicc -O2 -pthread -o build/msgrate-threads_ompi msgrate-threads.c
 *   mpirun -n 2 build/msgrate-threads_ompi --threads N [--iterations N] [--warmup N] [--window N]
 */
#include <mpi.h>
#include <pthread.h>

#include "bench-args.h"

static const char *USAGE =
    "usage: mpirun -n 2 msgrate-threads --threads N [flags]\n"
    "\n"
    "Neighbor message rate with N threads per process (pair layout): thread i of\n"
    "rank 0 exchanges with thread i of rank 1 on tag i. Rank 0 prints the aggregate.\n"
    "\n"
    "  --threads N      threads per process (default 1)\n"
    "  --iterations N   timed iterations            (default 10000)\n"
    "  --warmup N       untimed warm-up iterations  (default 10)\n"
    "  --window N       messages each way per iteration (default 12)\n"
    "  -h, --help       this text\n";

#define MAX_THREADS 64

static struct bench_flags f;
static pthread_barrier_t start_barrier;
static double elapsed[MAX_THREADS];

static void *run_thread(void *arg) {
    const int index = (int)(long)arg;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int peer = 1 - rank;
    const long window = f.window;
    char recvbuf[1], sendbuf[1] = { 0 };
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * window));
    if (reqs == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long it = 0; it < f.warmup + f.iterations; it++) {
        if (it == f.warmup) {
            /* every thread of both processes has warmed up before any clock starts */
            pthread_barrier_wait(&start_barrier);
            if (index == 0) MPI_Barrier(MPI_COMM_WORLD);
            pthread_barrier_wait(&start_barrier);
            elapsed[index] = MPI_Wtime();
        }
        for (long i = 0; i < window; i++) MPI_Irecv(recvbuf, 0, MPI_BYTE, peer, index, MPI_COMM_WORLD, &reqs[i]);
        for (long i = 0; i < window; i++) MPI_Isend(sendbuf, 0, MPI_BYTE, peer, index, MPI_COMM_WORLD, &reqs[window + i]);
        MPI_Waitall((int)(2 * window), reqs, MPI_STATUSES_IGNORE);
    }
    elapsed[index] = MPI_Wtime() - elapsed[index];
    free(reqs);
    return NULL;
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* --threads N is ours; the rest are the shared benchmark flags */
    long threads = 1;
    char *rest[64];
    int nrest = 0;
    for (int i = 0; i < argc && nrest < 63; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = bench_parse_long(argv[++i]);
        else rest[nrest++] = argv[i];
    }
    rest[nrest] = NULL;
    f = (struct bench_flags){ .iterations = 10000, .warmup = 10, .window = 12, .sizes = { 0 }, .nsizes = 1 };
    int early = bench_flags_or_exit(nrest, rest, &f, "msgrate-threads", USAGE, rank);
    if (early >= 0) return early;
    if (size != 2 || threads < 1 || threads > MAX_THREADS || provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0) fprintf(stderr, "msgrate-threads: needs 2 processes (got %d), 1..%d threads (got %ld) and MPI_THREAD_MULTIPLE (got %d)\n",
                               size, MAX_THREADS, threads, provided);
        MPI_Finalize();
        return 2;
    }

    pthread_barrier_init(&start_barrier, NULL, (unsigned)threads);
    pthread_t tids[MAX_THREADS];
    for (long t = 0; t < threads; t++) pthread_create(&tids[t], NULL, run_thread, (void *)t);
    for (long t = 0; t < threads; t++) pthread_join(tids[t], NULL);
    pthread_barrier_destroy(&start_barrier);

    if (rank == 0) {
        char lib[128];
        const char *impl = "other";
        bench_library(lib, sizeof lib, &impl);
        double longest = 0;
        for (long t = 0; t < threads; t++) if (elapsed[t] > longest) longest = elapsed[t];
        double rate = (double)threads * (double)f.window * (double)f.iterations / longest;
        printf("msgrate-threads: %.3f M messages/s aggregate (layout pair, threads %ld, %s)\n", rate / 1e6, threads, lib);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
