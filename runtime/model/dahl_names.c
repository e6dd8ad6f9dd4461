/* Tables of names (see dahl_names.h). */
#include "dahl_names.h"

#include <stdio.h>
#include <string.h>

int dahl_names_find(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name != NULL && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

void dahl_names_join(const char *const *names, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        int k = snprintf(buf + used, size - used, "%s%s", i > 0 ? ", " : "", names[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}
