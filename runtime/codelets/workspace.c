/* Workspace handles: scratch vectors with no home node, which StarPU allocates per worker the first time a
 * task accesses them as STARPU_SCRATCH and keeps for the next task on that worker. */
#include "dahl_codelets_internal.h"

#include <stdint.h>

starpu_data_handle_t dahl_workspace_create(size_t bytes)
{
    const size_t count = (bytes + sizeof(float) - 1) / sizeof(float);
    if (count == 0 || count > UINT32_MAX)
        return NULL;
    starpu_data_handle_t h = NULL;
    starpu_vector_data_register(&h, -1, 0, (uint32_t)count, sizeof(float));
    return h;
}

void dahl_workspace_destroy(starpu_data_handle_t workspace)
{
    if (workspace != NULL)
        starpu_data_unregister_submit(workspace);
}
