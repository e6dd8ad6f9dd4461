/* The registry of published figures (docs/figures.json): every simulated number that README.md and docs/
 * quote, the command that produces it, where its value lies in that command's output, the value pinned, and
 * each place it is quoted. A simulation is deterministic, so a figure either holds to the bit or has moved;
 * `dahlsim figures` (sim/cmd/figures.c) runs the commands and compares or rewrites. This part is the
 * StarPU-free logic: reading the registry, reading a value out of a JSON output, finding and rendering a
 * quote in a page's text.
 *
 * The registry:
 *   {"runs": [{"id": ID, "command": "dahlsim run ... --out $OUT", "fast": true|false}, ...],
 *    "figures": [{"id": ID, "run": RUN_ID, "file": "results.json",
 *                 "values": [{"path": "makespan_s", "over": PATH?, "file": FILE?, "value": NUMBER}, ...],
 *                 "quotes": [{"file": "README.md", "text": "simulated {} samples/s ({} s)",
 *                             "format": "%.0f" | ["%.0f", "%.2f"], "scale": 1 | [1, 1000],
 *                             "values": [0, 1]?}, ...]}, ...]}
 * A run's command is a shell line run from the tree's root with $OUT a fresh directory, the running dahlsim
 * first on PATH and $DAHLSIM_BUILD its build directory (bench/ programs: $DAHLSIM_BUILD/bench/...); "fast" runs (seconds on 2 cores) are the ones a CTest checks on every commit. A figure is
 * one or more numbers (a sentence's, or a table row's): each the number at "path" in the run's output "file"
 * (under $OUT; a value's own "file" overrides the figure's), divided by the one at "over" when given, times
 * its "scale" when given (a unit: 1e-3 for a text's milliseconds), pinned
 * in "value"; or derived from two earlier values I and J: "ratio": [I, J] is value I over value J, "change":
 * [I, J] that less 1; or "mean": [I, J, ...] the mean of earlier values. A quote's "text" holds each quoted number as "{}" (at most DAHLSIM_FIGURES_SLOTS): slot i shows
 * value i (or value "values"[i]) times "scale" (or its i-th) printed by "format" (or its i-th: one %f, %e or
 * %g conversion). The page must contain the text exactly once. */
#ifndef DAHLSIM_FIGURES_H
#define DAHLSIM_FIGURES_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* Checks a registry document: every field present and of its type, ids unique, every figure's run known,
 * every format one conversion. Returns 0, or -EINVAL with the field's path and what was expected in err. */
int dahlsim_figures_check_registry(const struct cJSON *reg, char *err, size_t err_size);

/* The number at path in doc: keys separated by '.', an array's item by [N] ("candidates[0].step_s"); a
 * boolean reads as 1 or 0; a text's K-th number (from 0) by a final #K ("grain_choice#7").
 * Returns 0, or -ENOENT (no such item) / -EINVAL (not a number) with the reason in err. */
int dahlsim_json_path_number(const struct cJSON *doc, const char *path, double *out, char *err, size_t err_size);

/* A quote's rendering of value: value * scale printed by format (checked by the registry check). */
void dahlsim_figures_render(double value, double scale, const char *format, char *buf, size_t size);

#define DAHLSIM_FIGURES_SLOTS 16
/* The most values one figure may have (a table row's numbers and what is derived from them). */
#define DAHLSIM_FIGURES_VALUES 256

/* Where quote (text holding "{}" slots, at most DAHLSIM_FIGURES_SLOTS) stands in page: each slot's number's
 * offset and length in at[], len[], and the text's 1-based line in *line, for its first match. Returns the
 * count of places the text matches (each slot a number: digits, signs, '.', an exponent): 1 is the only
 * good answer. */
int dahlsim_figures_find_quote(const char *page, const char *quote, size_t *at, size_t *len, int *line);

/* The count of "{}" slots in a quote's text. */
int dahlsim_figures_slots(const char *quote);

#endif /* DAHLSIM_FIGURES_H */
