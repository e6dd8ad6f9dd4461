/* Where a rank's StarPU-MPI progression thread runs (a scenario's "mpi_progress_core", dahlsim train
 * --mpi-progress-core): the names, StarPU-free. What each means in simulation: runtime/dahl_progress.h. */
#ifndef DAHL_PROGRESS_CORE_H
#define DAHL_PROGRESS_CORE_H

#include <stdbool.h>

enum dahl_progress_core {
    DAHL_PROGRESS_AUTO,      /* shared when the rank's workers hold every core of its node, else dedicated */
    DAHL_PROGRESS_SHARED,    /* the rank has no core beyond its workers' (several ranks on one machine, ...):
                                the progression thread and the submitting thread take their time from them */
    DAHL_PROGRESS_DEDICATED, /* a core of its own (StarPU's advice: one worker fewer than cores): no charge */
    DAHL_PROGRESS_BUSY,      /* auto's rule, the turns charged for the whole run as if a request were always
                                pending: a rank whose receives wait from each step's start, alone (the one-node
                                runs that dahlsim plan predicts multi-node candidates from) */
};

/* "auto", "shared", "dedicated", "busy". */
const char *dahl_progress_core_name(enum dahl_progress_core c);
/* One of those names into *out; false for anything else (NULL included). */
bool dahl_progress_core_parse(const char *text, enum dahl_progress_core *out);

#endif /* DAHL_PROGRESS_CORE_H */
