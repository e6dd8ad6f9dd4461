/* Data-parallel training across nodes with StarPU-MPI: one MPI rank per node, each training its shard of
 * every batch with its own StarPU workers, the weight gradients all-reduced between ranks before the SGD
 * update. Built against StarPU-MPI (the sim-mpi flavour over SimGrid's SMPI, the native-mpi flavour over
 * OpenMPI) this is the real thing; in the other flavours there is one node, rank 0, and nothing to reduce.
 * This header is StarPU-free. The allreduce object is owned by its creator; the network only borrows it. */
#ifndef DAHL_MPI_H
#define DAHL_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when this runtime was built against StarPU-MPI. */
bool dahl_mpi_built(void);

/* This process's rank and the number of ranks: 0 and 1 until the engine started, and without StarPU-MPI. */
int dahl_mpi_rank(void);
int dahl_mpi_size(void);

/* Waits until every rank got there (StarPU-MPI's barrier, which also waits for this rank's pending
 * StarPU-MPI requests). No-op on one node. Returns 0 or a negative error. */
int dahl_mpi_barrier(void);

/* Rank 0 receives every rank's n values, rank r's at all[r * n] (all: size * n values, rank 0 only; NULL
 * elsewhere); the others send theirs. Blocking; every rank must call it with the same n. Returns 0 or a
 * negative error. */
int dahl_mpi_gather(const double *mine, size_t n, double *all);

/* The same for bytes, and parts of different sizes: rank 0 receives rank r's sizes[r] bytes into all, in
 * rank order (all: the sum of sizes; sizes: one per rank, read on rank 0 only, sizes[0] == nbytes there);
 * the others send their nbytes. Blocking; every rank calls it. Returns 0 or a negative error. */
int dahl_mpi_gather_bytes(const void *mine, size_t nbytes, void *all, const size_t *sizes);

/* How the gradients of every training step are summed across ranks. */
enum dahl_allreduce_algo {
    DAHL_ALLREDUCE_TREE, /* binomial-tree reduce to rank 0, then binomial-tree broadcast (dahl_mpi.c says why) */
};

/* The StarPU-MPI tag of gradient index's message at a tree level (phase 0: reduce, 1: broadcast) in step. */
int64_t dahl_allreduce_tag(size_t step, int index, int phase, int level);

/* "tree" (static string); parse returns 0 or -EINVAL. */
const char *dahl_allreduce_algo_name(enum dahl_allreduce_algo a);
int dahl_allreduce_algo_parse(const char *text, enum dahl_allreduce_algo *out);

/* What one rank's allreduces cost, counted at submission (bytes, messages) and timed by StarPU callbacks
 * (simulated time under SimGrid). */
struct dahl_allreduce_stats {
    double bytes_sent, bytes_received;
    long messages_sent, messages_received;
    long tasks;           /* accumulate tasks the allreduce itself submitted */
    double comm_s;        /* sum over steps of the step's allreduce time */
};

struct dahl_allreduce;

/* One allreduce context per network (its temporary buffers and tags). NULL when memory runs out. Requires
 * the engine to be running. With one rank it submits nothing. */
struct dahl_allreduce *dahl_allreduce_create(enum dahl_allreduce_algo algo);
/* The same among ranks base .. base + size - 1 only (a hybrid partition: the replicas of one pipeline stage);
 * every one of them creates it with the same base and size. */
struct dahl_allreduce *dahl_allreduce_create_among(enum dahl_allreduce_algo algo, int base, int size);
/* Waits for its transfers and frees it. NULL is a no-op. */
void dahl_allreduce_destroy(struct dahl_allreduce *ar);

/* Step times: step i's allreduce ran from the moment its first gradient was ready on this rank to the
 * moment its last gradient held the sum of every rank's (StarPU clock, microseconds). Waits for the
 * pending callbacks; returns the number of steps; the arrays stay owned by ar. */
size_t dahl_allreduce_step_times(struct dahl_allreduce *ar, const double **start_us, const double **end_us);
void dahl_allreduce_stats(struct dahl_allreduce *ar, struct dahl_allreduce_stats *out);

#endif /* DAHL_MPI_H */
