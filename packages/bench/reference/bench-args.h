/*
 * Command-line flags shared by the C references, mirroring
 * ../src/bench-args.ts: --iterations N, --warmup N, --window N,
 * --size BYTES (repeatable, comma-separated), --json FILE, -h/--help.
 * Header-only so each benchmark builds from one `mpicc file.c` command.
 */
#ifndef TSMPI_BENCH_ARGS_H
#define TSMPI_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_MAX_SIZES 16

struct bench_flags {
    long iterations;
    long warmup;
    long window;
    long sizes[BENCH_MAX_SIZES];
    int nsizes;
    const char *json_file; /* NULL when --json is absent */
    int help;
};

/* A non-negative decimal integer, or -1. */
static long bench_parse_long(const char *s) {
    char *end = NULL;
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || (*end != '\0' && *end != ',')) return -1;
    return v;
}

/* Parses argv into f (defaults already filled in). Returns 0, or -1 after
 * writing a one-line message to err. */
static int bench_parse_args(int argc, char **argv, struct bench_flags *f, char *err, size_t errlen) {
    int sizes_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { f->help = 1; return 0; }
        const char *name = a;
        const char *val = NULL;
        char namebuf[32];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq != NULL && (size_t)(eq - a) < sizeof namebuf) {
            memcpy(namebuf, a, (size_t)(eq - a));
            namebuf[eq - a] = '\0';
            name = namebuf;
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[i + 1];
        }
        long *target = NULL;
        long min = 0;
        if (strcmp(name, "--iterations") == 0) { target = &f->iterations; min = 1; }
        else if (strcmp(name, "--warmup") == 0) { target = &f->warmup; min = 0; }
        else if (strcmp(name, "--window") == 0) { target = &f->window; min = 1; }
        else if (strcmp(name, "--size") != 0 && strcmp(name, "--json") != 0) {
            snprintf(err, errlen, "unknown option '%s'", a);
            return -1;
        }
        if (val == NULL) { snprintf(err, errlen, "option '%s' needs a value", name); return -1; }
        if (eq == NULL || name == a) i++; /* the value was the next argument */
        if (target != NULL) {
            long v = bench_parse_long(val);
            if (v < min) { snprintf(err, errlen, "%s: expected an integer >= %ld, got '%s'", name, min, val); return -1; }
            *target = v;
        } else if (strcmp(name, "--json") == 0) {
            f->json_file = val;
        } else { /* --size, possibly "0,8" */
            if (!sizes_given) { f->nsizes = 0; sizes_given = 1; }
            const char *p = val;
            for (;;) {
                long v = bench_parse_long(p);
                if (v < 0 || f->nsizes >= BENCH_MAX_SIZES) { snprintf(err, errlen, "--size: expected byte counts >= 0, got '%s'", val); return -1; }
                f->sizes[f->nsizes++] = v;
                p = strchr(p, ',');
                if (p == NULL) break;
                p++;
            }
        }
    }
    return 0;
}

/* "Open MPI v4.1.4" or "MPICH Version: 4.0.2" -> a short library name for the
 * result line ("Open MPI 4.1.4", "MPICH 4.0.2") and an impl id for JSON. */
static void bench_library(char *name, size_t namelen, const char **impl) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    version[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    const char *nl = strpbrk(version, "\n,");
    size_t first = nl ? (size_t)(nl - version) : strlen(version);
    if (strstr(version, "Open MPI") != NULL) {
        *impl = "openmpi";
        const char *v = strstr(version, " v");
        int vlen = 0;
        if (v != NULL) { v += 2; while (v[vlen] != '\0' && v[vlen] != ',' && v[vlen] != '\n') vlen++; }
        snprintf(name, namelen, "Open MPI %.*s", vlen, v ? v : "");
    } else if (strstr(version, "MPICH") != NULL) {
        *impl = "mpich";
        const char *v = strstr(version, "Version:");
        if (v != NULL) {
            v += 8;
            while (*v == ' ' || *v == '\t') v++;
            int vlen = 0;
            while (v[vlen] != '\0' && v[vlen] != '\n' && v[vlen] != '\t') vlen++;
            snprintf(name, namelen, "MPICH %.*s", vlen, v);
        } else {
            snprintf(name, namelen, "MPICH");
        }
    } else {
        *impl = "other";
        snprintf(name, namelen, "%.*s", (int)first, version);
    }
}

/* Takes a benchmark's own flag `--NAME VALUE` or `--NAME=VALUE` out of argv (the shared parser knows only
 * the common flags) and returns its value, or NULL when it is absent. */
static inline const char *bench_take_flag(int *argc, char **argv, const char *name) {
    const char *value = NULL;
    size_t len = strlen(name);
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-' && strncmp(a + 2, name, len) == 0) {
            if (a[2 + len] == '\0' && i + 1 < *argc) { value = argv[++i]; continue; }
            if (a[2 + len] == '=') { value = a + 3 + len; continue; }
        }
        argv[kept++] = argv[i];
    }
    *argc = kept;
    return value;
}

/* Parses the flags. On --help or a bad flag, rank 0 prints (usage, or the error
 * and usage), MPI is finalized, and the process's exit status (0 or 2) is
 * returned; -1 means go on. */
static int bench_flags_or_exit(int argc, char **argv, struct bench_flags *f, const char *name, const char *usage, int rank) {
    char err[256];
    if (bench_parse_args(argc, argv, f, err, sizeof err) != 0) {
        if (rank == 0) fprintf(stderr, "%s: %s\n\n%s", name, err, usage);
        MPI_Finalize();
        return 2;
    }
    if (f->help) {
        if (rank == 0) fputs(usage, stdout);
        MPI_Finalize();
        return 0;
    }
    return -1;
}

/* Opens `path` to append one JSON record and writes the fields every
 * benchmark shares, up to and including `"bench":"NAME",`; the caller writes
 * the rest of the record and closes the file. NULL (after perror) if the file
 * cannot be opened. */
static FILE *bench_json_begin(const char *path, const char *impl, const char *lib, const char *bench) {
    FILE *out = fopen(path, "a");
    if (out == NULL) {
        perror(path);
        return NULL;
    }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    char host[MPI_MAX_PROCESSOR_NAME];
    int hlen = 0;
    MPI_Get_processor_name(host, &hlen);
    fprintf(out, "{\"impl\":\"%s\",\"library\":\"%s\",\"date\":\"%s\",\"host\":\"%s\",\"bench\":\"%s\",", impl, lib, date, host, bench);
    return out;
}

#endif
