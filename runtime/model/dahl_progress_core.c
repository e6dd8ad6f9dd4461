/* The progression thread's placements by name. See dahl_progress_core.h. */
#include "dahl_progress_core.h"

#include "dahl_names.h"

static const char *const names[] = {"auto", "shared", "dedicated", "busy"}; /* in enum order */

const char *dahl_progress_core_name(enum dahl_progress_core c)
{
    return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : names[0];
}

bool dahl_progress_core_parse(const char *text, enum dahl_progress_core *out)
{
    int i = dahl_names_find(names, sizeof(names) / sizeof(names[0]), text);
    if (i < 0)
        return false;
    *out = (enum dahl_progress_core)i;
    return true;
}
