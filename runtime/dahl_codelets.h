/* Task insertion helpers, one per codelet: dahl_insert_<op>() submits one task asynchronously and returns 0
 * or a negative StarPU error code. Perf-model symbols are a contract with calibration/: renaming one means
 * recalibrating every machine. */
#ifndef DAHL_CODELETS_H
#define DAHL_CODELETS_H

/* Perf-model symbol "dahl_probe": a data-less task busy on one CPU for duration_us (footprint: the
 * duration rounded to whole microseconds). */
int dahl_insert_probe(double duration_us);

#endif /* DAHL_CODELETS_H */
