/* The sweep report (`dahlsim report DIR`, sim/cmd/report.c): one self-contained HTML page for a sweep
 * directory (what `dahlsim sweep --out DIR` wrote): the scenario's question, the sweep's plots inline (SVG), a
 * table of every finished point (makespan, samples/s, parallel efficiency from its trace summary, bytes moved
 * and peak memory from its results.json) with links to each traced point's Gantt chart, and per traced point
 * its per-worker utilisation. StarPU-free: it reads files only. */
#ifndef DAHLSIM_REPORT_H
#define DAHLSIM_REPORT_H

/* Writes the page of sweep directory dir to path (through path.tmp, renamed into place). Returns 0, or after
 * the error line -EINVAL when dir has no readable results.jsonl, a line of it is not a sweep record, or
 * path.tmp cannot be created, -EIO when writing the page failed. */
int dahlsim_report_write(const char *dir, const char *path);

#endif /* DAHLSIM_REPORT_H */
