/* The probe: a small, known task graph (independent tasks of fixed duration) that checks a StarPU flavour
 * end to end. Natively it measures the machine; under SimGrid its makespan must be what the perf models
 * predict. */
#ifndef DAHL_PROBE_H
#define DAHL_PROBE_H

/* Submits ntasks probe tasks of duration_us each on the running engine, waits for them, and stores the
 * makespan (first submission to last completion, StarPU clock, microseconds) in *makespan_us.
 * Returns 0 or a negative error code (-EINVAL for ntasks < 1 or duration_us < 0). */
int dahl_probe_run(int ntasks, double duration_us, double *makespan_us);

/* Submits ntasks empty tasks (dahl_insert_empty) shaped like dahl's: each reads one shared tensor and
 * updates one of nhandles small tensors in turn (a chain per tensor, as a sample's buffers are reused every
 * step), waits for them, and stores the makespan as dahl_probe_run does. Natively that is what the runtime
 * costs per task (submission included); under SimGrid, what StarPU-SimGrid charges for it.
 * Returns 0 or a negative error code (-EINVAL for ntasks < 1 or nhandles < 1, -ENOMEM). */
int dahl_probe_empty_run(int ntasks, int nhandles, double *makespan_us);

/* The makespan that perfect list scheduling gives on nworkers identical workers with no overhead:
 * ceil(ntasks / nworkers) * duration_us. */
double dahl_probe_ideal_us(int ntasks, double duration_us, int nworkers);

#endif /* DAHL_PROBE_H */
