/*
 * Collective write then read of a 3-D array through subarray views, 4 processes: the C reference
 * for ../src/io.ts (same array, decomposition, calls, flags and output lines).
 *
 * The array is MPI_DOUBLE, X x 256 x 256 (SIZE / 512 KiB planes; default 256 MiB: 512 planes),
 * split 2 x 2 x 1: rank r holds the block at (r >> 1, r & 1, 0), the first two dimensions halved,
 * the rows whole (../src/io-block.ts). Every rank opens one file in DIR, sets its view to its block
 * (MPI_File_set_view with an MPI_Type_create_subarray filetype) and runs MPI_File_write_all of its
 * block from the start of the view ITERATIONS times, then MPI_File_read_all as many times; each
 * call timed from a barrier, its time the slowest rank's. After the last read every rank compares
 * what it read with what it wrote (memcmp), outside the timed part. No sync. The file is deleted.
 *
 *   mpicc -O2 -o build/io_ompi io.c
 *   mpirun -n 4 build/io_ompi --dir /var/tmp
 */
#include <mpi.h>
#include <unistd.h>

#include "bench-report.h"

static const char *USAGE =
    "usage: mpirun -n 4 io [--dir DIR] [flags]\n"
    "\n"
    "Collective write then read of a 3-D MPI_DOUBLE array split 2 x 2 x 1 over 4 processes, each\n"
    "rank's block a subarray view: write_all, then read_all, each timed per call.\n"
    "\n"
    "  --dir DIR        directory of the file (default /var/tmp; the file is deleted afterwards)\n"
    "  --iterations N   timed writes, then as many timed reads (default 5)\n"
    "  --warmup N       untimed write and read before them (default 1)\n"
    "  --size BYTES     the array's size, a multiple of 1 MiB (default 268435456: 512 x 256 x 256)\n"
    "  --json FILE      append one JSON record (one line) per call to FILE\n"
    "  -h, --help       this text\n";

#define PLANE_ROWS 256
#define ROW_ELEMENTS 256
#define QUANTUM (2L * PLANE_ROWS * ROW_ELEMENTS * 8)

/* `calls` collective calls (write or read) after `warm` untimed ones; the slowest rank's time of each into
 * samples, and the CPU milliseconds per call summed over the ranks. */
static double timed(MPI_File fh, int write, double *buf, int count, long warm, long calls, double *samples) {
    double cpu = 0;
    for (long i = -warm; i < calls; i++) {
        MPI_File_seek(fh, 0, MPI_SEEK_SET);
        MPI_Barrier(MPI_COMM_WORLD);
        double cpu_before = bench_cpu_seconds();
        double start = MPI_Wtime();
        MPI_Status st;
        int rc = write ? MPI_File_write_all(fh, buf, count, MPI_DOUBLE, &st) : MPI_File_read_all(fh, buf, count, MPI_DOUBLE, &st);
        double seconds = MPI_Wtime() - start;
        double spent = bench_cpu_seconds() - cpu_before;
        int got = 0;
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        if (rc != MPI_SUCCESS || got != count) { fprintf(stderr, "io: a collective call failed or moved %d of %d elements\n", got, count); MPI_Abort(MPI_COMM_WORLD, 1); }
        if (i < 0) continue;
        MPI_Allreduce(&seconds, &samples[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        cpu += spent;
    }
    double cpu_ms = calls > 0 ? cpu * 1e3 / (double)calls : 0, cpu_ms_all = 0;
    MPI_Allreduce(&cpu_ms, &cpu_ms_all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return cpu_ms_all;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = bench_take_flag(&argc, argv, "dir");
    if (dir == NULL) dir = "/var/tmp";
    struct bench_flags f = { .iterations = 5, .warmup = 1, .window = 1, .sizes = { 268435456L }, .nsizes = 1 };
    int early = bench_flags_or_exit(argc, argv, &f, "io", USAGE, rank);
    if (early >= 0) return early;
    const long bytes = f.sizes[0], calls = f.iterations, warm = f.warmup;
    const char *bad = size != 4 ? "runs on 4 processes" : f.nsizes != 1 || bytes <= 0 || bytes % QUANTUM != 0 ? "--size must be one positive multiple of 1048576 bytes" : NULL;
    if (bad != NULL) {
        if (rank == 0) fprintf(stderr, "io: %s\n\n%s", bad, USAGE);
        MPI_Finalize();
        return 2;
    }
    char lib[128];
    const char *impl = "other";
    bench_library(lib, sizeof lib, &impl);

    int sizes[3] = { (int)(bytes / (PLANE_ROWS * ROW_ELEMENTS * 8)), PLANE_ROWS, ROW_ELEMENTS };
    int subsizes[3] = { sizes[0] / 2, sizes[1] / 2, sizes[2] };
    int starts[3] = { subsizes[0] * (rank >> 1), subsizes[1] * (rank & 1), 0 };
    const int count = subsizes[0] * subsizes[1] * subsizes[2];
    double *written = malloc(sizeof(double) * (size_t)count), *read = malloc(sizeof(double) * (size_t)count);
    double *wsamples = malloc(sizeof(double) * (size_t)calls), *rsamples = malloc(sizeof(double) * (size_t)calls);
    if (written == NULL || read == NULL || wsamples == NULL || rsamples == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    long n = 0; /* each element holds its index in the array */
    for (int i = 0; i < subsizes[0]; i++)
        for (int j = 0; j < subsizes[1]; j++)
            for (int k = 0; k < subsizes[2]; k++) written[n++] = (double)((((long)starts[0] + i) * sizes[1] + starts[1] + j) * sizes[2] + starts[2] + k);
    memset(read, 0xff, sizeof(double) * (size_t)count);

    char path[4096];
    if (rank == 0) snprintf(path, sizeof path, "%s/tsmpi-io-bench-c-%ld-%ld.dat", dir, (long)getpid(), (long)time(NULL));
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Datatype filetype;
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype);
    MPI_Type_commit(&filetype);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        if (rank == 0) fprintf(stderr, "io: cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL);
    for (long w = 0; w < warm; w++) {
        timed(fh, 1, written, count, 1, 0, wsamples);
        timed(fh, 0, read, count, 1, 0, rsamples);
    }
    memset(read, 0xff, sizeof(double) * (size_t)count);
    double wcpu = timed(fh, 1, written, count, 0, calls, wsamples);
    double rcpu = timed(fh, 0, read, count, 0, calls, rsamples);
    int differ = memcmp(read, written, sizeof(double) * (size_t)count) != 0, differ_all = 0;
    MPI_Allreduce(&differ, &differ_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (differ_all != 0) { if (rank == 0) fprintf(stderr, "io: %d rank(s) read back other bytes than they wrote\n", differ_all); MPI_Abort(MPI_COMM_WORLD, 1); }
    MPI_File_close(&fh);
    if (rank == 0) {
        MPI_File_delete(path, MPI_INFO_NULL);
        double wloop = 0, rloop = 0;
        for (long i = 0; i < calls; i++) { wloop += wsamples[i]; rloop += rsamples[i]; }
        struct call_report r = { .name = "io-write", .lib = lib, .impl = impl, .flavour = "", .extra_json = "", .json_file = f.json_file,
                                 .bytes = bytes, .calls = calls, .warmup = warm, .processes = 4, .loop_seconds = wloop, .cpu_ms_all = wcpu };
        bench_report_call(&r, wsamples);
        r.name = "io-read", r.loop_seconds = rloop, r.cpu_ms_all = rcpu;
        bench_report_call(&r, rsamples);
    }
    MPI_Type_free(&filetype);
    free(written);
    free(read);
    free(wsamples);
    free(rsamples);
    MPI_Finalize();
    return 0;
}
