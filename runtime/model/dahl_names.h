/* Tables of names, as dahl_model keeps its names (heuristics, perf-model kinds and symbols, scheduling
 * policies): arrays of static strings, looked up by name and listed for error messages and --help. */
#ifndef DAHL_NAMES_H
#define DAHL_NAMES_H

#include <stddef.h>

/* The index of name among names[0..n-1], or -1 (name NULL or not there). */
int dahl_names_find(const char *const *names, size_t n, const char *name);

/* names[0..n-1], comma-separated, into buf (truncated to size; "" when n is 0). */
void dahl_names_join(const char *const *names, size_t n, char *buf, size_t size);

#endif /* DAHL_NAMES_H */
