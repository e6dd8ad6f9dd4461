/* runtime/model/ against StarPU: the names and hashes dahl_model keeps without StarPU must be StarPU
 * 1.3.10's own. The scheduling policies against starpu_sched_get_predefined_policies(), the footprint CRC
 * against starpu_hash_crc32c_be*, every footprint function against the hash its codelet used to compute
 * with StarPU's, and the perf-model symbols against the codelets' perf models. */
#include <criterion/criterion.h>

#include "codelets/dahl_codelets_internal.h"
#include "dahl_footprint.h"
#include "dahl_layer.h"
#include "dahl_perfnames.h"
#include "dahl_schedconf.h"

#include <starpu.h>
#include <starpu_hash.h>

#include <stdint.h>
#include <string.h>

Test(model, policies_are_starpus_predefined_ones)
{
    struct starpu_sched_policy **starpu = starpu_sched_get_predefined_policies();
    size_t n = 0, k = 0;
    const char *const *names = dahl_sched_policies(&n);
    for (; starpu[k] != NULL; k++) {
        cr_assert_lt(k, n, "StarPU has more policies than dahl_model, next %s", starpu[k]->policy_name);
        cr_assert_str_eq(names[k], starpu[k]->policy_name, "policy %zu", k);
        cr_assert(dahl_sched_policy_known(starpu[k]->policy_name));
    }
    cr_assert_eq(k, n, "dahl_model has %zu policies, StarPU %zu", n, k);
    cr_assert_not(dahl_sched_policy_known("lws2"));
    cr_assert_not(dahl_sched_policy_known(NULL));
    char list[1024];
    dahl_sched_policy_list(list, sizeof(list));
    cr_assert(strncmp(list, "modular-eager, modular-eager-prefetching, ", 42) == 0, "%s", list);
}

Test(model, crc32c_is_starpus)
{
    uint8_t bytes[97];
    uint64_t state = 0x243f6a8885a308d3ull;
    for (size_t i = 0; i < sizeof(bytes); i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        bytes[i] = (uint8_t)(state >> 56);
    }
    for (size_t n = 0; n <= sizeof(bytes); n += 8)
        for (uint32_t crc = 0; crc < 3; crc++)
            cr_assert_eq(dahl_crc32c_be_n(bytes, n, crc * 0x9e3779b9u), starpu_hash_crc32c_be_n(bytes, n, crc * 0x9e3779b9u),
                         "%zu bytes", n);
    const uint32_t words[] = {0, 1, 10, 120, 0x80000000u, 0xffffffffu};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        cr_assert_eq(dahl_crc32c_be(words[i], 7), starpu_hash_crc32c_be(words[i], 7), "word %u", words[i]);
}

Test(model, footprints_are_the_codelets)
{
    /* The formulas the codelets used with StarPU's hash before it moved here: calibration/ holds footprints
     * made with them. */
    const struct dahl_conv2d_shape conv = {.c = 1, .h = 28, .w = 28, .f = 6, .kh = 5, .kw = 5, .stride = 1, .pad = 2};
    const struct dahl_maxpool_shape pool = {.c = 6, .h = 28, .w = 28, .k = 2, .stride = 2};
    cr_assert_eq(dahl_conv2d_footprint_of(&conv), starpu_hash_crc32c_be_n(&conv, sizeof(conv), 0));
    /* max-pool's shape had these five ints before it had pad: unpadded windows keep their footprints */
    const int pool_before_pad[5] = {6, 28, 28, 2, 2};
    cr_assert_eq(dahl_maxpool_footprint_of(&pool), starpu_hash_crc32c_be_n(pool_before_pad, sizeof(pool_before_pad), 0));
    const struct dahl_maxpool_shape padded = {.c = 64, .h = 16, .w = 16, .k = 3, .stride = 2, .pad = 1};
    cr_assert_eq(dahl_maxpool_footprint_of(&padded), starpu_hash_crc32c_be_n(&padded, sizeof(padded), 0));
    const size_t counts[] = {1, 4704, 48000, (size_t)1 << 18};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        const uint64_t n64 = counts[i];
        uint32_t of_n = starpu_hash_crc32c_be_n(&n64, sizeof(n64), 0);
        cr_assert_eq(dahl_relu_footprint_of(counts[i]), of_n);
        cr_assert_eq(dahl_reduce_footprint_of(counts[i]), of_n);
        cr_assert_eq(dahl_sgd_update_footprint_of(counts[i], false), starpu_hash_crc32c_be(0, of_n));
        cr_assert_eq(dahl_sgd_update_footprint_of(counts[i], true), starpu_hash_crc32c_be(1, of_n));
    }
    cr_assert_eq(dahl_dense_footprint_of(400, 120), starpu_hash_crc32c_be(120, starpu_hash_crc32c_be(400, 0)));
    cr_assert_eq(dahl_softmax_xent_footprint_of(10), starpu_hash_crc32c_be(10, 0));
}

Test(model, symbols_are_the_codelets_perf_models)
{
    size_t n = 0, nmodels = 0;
    const char *const *symbols = dahl_codelet_symbols(&n);
    struct starpu_perfmodel *const *models = dahl_codelets_models(&nmodels);
    cr_assert_eq(n, nmodels);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(models[i]->symbol, symbols[i], "model %zu", i);
}

/* The layer table (dahl_layer.h): names unique, and each kind's codelet list is exactly the symbols its tasks
 * use, forward and backward, on every layer of LeNet, of the deep variant and of a pooled net (every kind), at
 * one sample and at several.
 * Every task's accesses name a tensor and the layers with parameters accumulate into both gradients. */
Test(model, layer_table_lists_what_its_tasks_run)
{
    int nk = dahl_layer_type_count();
    cr_assert_geq(nk, 4);
    for (int a = 0; a < nk; a++) {
        const struct dahl_layer_type *k = dahl_layer_type_at(a);
        cr_assert_eq(dahl_layer_type_get(k->kind), k);
        cr_assert_eq(dahl_layer_type_by_name(k->name), k, "%s", k->name);
        cr_assert_not_null(k->trace_name);
        for (int b = a + 1; b < nk; b++)
            cr_assert_str_neq(k->name, dahl_layer_type_at(b)->name);
    }
    cr_assert_null(dahl_layer_type_by_name("layernorm-not-yet"));
    struct dahl_network_desc nets[5] = {
        [2] = {.c = 2, .h = 12, .w = 12, .nclasses = 10, .nlayers = 5,
               .layers = {{.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 2, .pad = 1},
                          {.kind = DAHL_LAYER_AVGPOOL, .kernel = 2, .stride = 1},
                          {.kind = DAHL_LAYER_RELU},
                          {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                          {.kind = DAHL_LAYER_DENSE, .units = 10}}},
        [3] = {.c = 1, .h = 8, .w = 8, .nclasses = 10, .nlayers = 6,
               .layers = {{.kind = DAHL_LAYER_CONV, .filters = 2, .kernel = 3, .stride = 1, .pad = 1},
                          {.kind = DAHL_LAYER_RELU},
                          {.kind = DAHL_LAYER_ADD, .back = {0, 1}},
                          {.kind = DAHL_LAYER_DROPOUT, .percent = 30},
                          {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                          {.kind = DAHL_LAYER_DENSE, .units = 10}}}};
    cr_assert_eq(dahl_network_desc_lenet(3, 16, 16, 10, &nets[0]), 0);
    cr_assert_eq(dahl_network_desc_resnet(1, 8, 8, 10, 8, &nets[4]), 0);
    cr_assert_eq(dahl_network_desc_deep(1, 12, 12, 10, 2, 4, &nets[1]), 0);
    bool used[16][8] = {{false}};
    cr_assert_leq(nk, 16);
    char err[256];
    for (int d = 0; d < 5; d++) {
        struct dahl_layer_shape ls[DAHL_NETWORK_MAX_LAYERS];
        cr_assert_eq(dahl_network_desc_shapes(&nets[d], ls, err, sizeof(err)), 0, "%s", err);
        for (int i = 0; i < nets[d].nlayers; i++) {
            const struct dahl_layer_type *k = dahl_layer_type_get(ls[i].desc.kind);
            int ki = 0;
            while (dahl_layer_type_at(ki) != k)
                ki++;
            cr_assert_eq(k->has_params, ls[i].nw > 0);
            for (int n = 1; n <= 3; n += 2) {
                for (int pass = DAHL_PASS_FORWARD; pass <= DAHL_PASS_STEP; pass++) {
                    struct dahl_layer_task t[DAHL_LAYER_MAX_TASKS];
                    int nt = dahl_layer_tasks(&ls[i], (enum dahl_pass)pass, n, true, t);
                    cr_assert(nt >= (pass == DAHL_PASS_STEP ? 0 : 1) && nt <= DAHL_LAYER_MAX_TASKS,
                              "%s: %d tasks", k->name, nt);
                    int grads = 0;
                    for (int j = 0; j < nt; j++) {
                        int c = 0;
                        while (k->codelets[c].symbol != NULL && strcmp(k->codelets[c].symbol, t[j].symbol) != 0)
                            c++;
                        cr_assert_not_null(k->codelets[c].symbol, "%s runs %s, not in its codelets", k->name,
                                           t[j].symbol);
                        used[ki][c] = true;
                        cr_assert(t[j].naccesses >= 2 && t[j].flops >= 0 && t[j].bytes > 0 && t[j].size >= 1);
                        for (int x = 0; x < t[j].naccesses; x++) {
                            cr_assert_lt((int)t[j].access[x].tensor, DAHL_T_COUNT);
                            grads += t[j].access[x].mode == DAHL_ACCESS_GRAD &&
                                     (t[j].access[x].tensor == DAHL_T_DW || t[j].access[x].tensor == DAHL_T_DB);
                        }
                    }
                    cr_assert_eq(grads, pass == DAHL_PASS_BACKWARD && k->has_params ? 2 : 0, "%s", k->name);
                }
            }
        }
    }
    for (int a = 0; a < nk; a++)
        for (int c = 0; dahl_layer_type_at(a)->codelets[c].symbol != NULL; c++)
            cr_assert(used[a][c], "%s lists %s, which none of its tasks runs", dahl_layer_type_at(a)->name,
                      dahl_layer_type_at(a)->codelets[c].symbol);
}
