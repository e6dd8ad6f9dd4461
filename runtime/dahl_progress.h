/* The StarPU-MPI progression thread's turns on the cores (docs/multinode.md, "The progression thread").
 *
 * StarPU-MPI 1.3.10's progression thread ("MPI") polls MPI_Test without pause while any request is pending
 * (mpi/src/mpi/starpu_mpi_mpi.c, its progress loop), and dahl's receives are pending from their submission,
 * early in each step; a rank's last awake worker polls for tasks instead of sleeping. Where the rank's
 * workers hold every core, the kernel runs these threads by turns of its time slice, and the thread handles
 * what arrives only in its turns. StarPU-SimGrid gives it no time and no turns. This module counts dahl's
 * requests and times how long any is pending. In simulation, on a rank whose thread shares the workers'
 * cores, it time-slices them while a request is pending: the thread holds one core a slice at a time in
 * turn with the workers, and waits for its turn before handling requests
 * (scripts/patches/starpu-simgrid-progress-gate.patch). Natively it reads the thread's CPU time from /proc. */
#ifndef DAHL_PROGRESS_H
#define DAHL_PROGRESS_H

#include "dahl_progress_core.h" /* enum dahl_progress_core */

#include <stdbool.h>

struct dahl_progress_stats {
    bool charged;     /* simulation: the polling is charged on the worker cores (shared) */
    double share;     /* ... the share of each worker core it takes while a request is pending */
    long requests;    /* point-to-point requests dahl submitted */
    double pending_s; /* time with at least one of them pending, on StarPU's clock; -1: not timed (simulated
                         ranks whose thread is not charged) */
    double cpu_s;     /* natively: the "MPI" thread's CPU time (-1: not found); simulated: the CPU time charged */
    double turn_wait_s; /* simulation: the thread's waits for its turn on a core before handling its requests */
    long turn_waits;
};

/* The engine, after StarPU-MPI started (DAHL_MPI builds): the mode, whether this rank's workers hold every
 * core of its node, and (simulation) its worker cores' hosts: StarPU's names CPU0 .. CPU<ncores-1> after
 * host_prefix. Starts the counts from zero. */
void dahl_progress_start(enum dahl_progress_core mode, bool cores_full, const char *host_prefix, int ncores);
/* The engine, before StarPU-MPI stops: ends a charge still running. */
void dahl_progress_stop(void);

/* dahl_mpi.c: a request is submitted (before starpu_mpi_i*_detached). True: it is timed, and its completion
 * must call dahl_progress_request_done (its callback; arg unused; also when the submission failed). */
bool dahl_progress_request_begin(void);
void dahl_progress_request_done(void *arg);

/* Simulation: whether this rank's progression thread takes turns on its workers' cores, other ranks being
 * there to send it requests (false natively, with one rank, and before dahl_progress_start). */
bool dahl_progress_takes_turns(void);

/* Simulation: how long a progression thread charged on ncores cores, of rank `rank`, waking at time t (s),
 * waits for its turn (0 in its turn, and natively). The representative ranks' light ranks (dahl_light.h)
 * take the same turns as StarPU-MPI's thread would on them. */
double dahl_progress_turn_wait_s(double t, int rank, int ncores);
/* Simulation, the same thread: the core its turn holds at time t, -1 in its waiting slice and natively;
 * since_s (if not NULL) tells how long that slice has run. */
int dahl_progress_turn_core(double t, int rank, int ncores, double *since_s);
/* Simulation, a charged thread on ncores cores: the workers' work (seconds of them all busy) between from_s
 * and to_s on rank `rank`, its turns taken out; and when rank `rank`, starting at from_s, has done work_s of
 * it. With core in [0, ncores) the work is that one core's, which a turn stops for the whole slice; with
 * core -1 it is all the cores', a share of which each turn takes. A light rank (dahl_light.h) replays its
 * representative's work under its own turns so. */
double dahl_progress_work_s(double from_s, double to_s, int rank, int ncores, int core);
double dahl_progress_turned_s(double from_s, double work_s, int rank, int ncores, int core);
/* Whether this rank's thread is charged on its cores (dahl_progress_start), and how many. */
bool dahl_progress_charged(int *ncores);

/* The figures so far (since dahl_progress_start; still readable after the engine stopped). */
void dahl_progress_stats(struct dahl_progress_stats *out);

#endif /* DAHL_PROGRESS_H */
