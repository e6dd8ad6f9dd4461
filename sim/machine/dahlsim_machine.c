/* `dahlsim machine synth SPEC.json --machine NAME`: a simulated machine for hardware nobody measured. The
 * spec's datasheet numbers and the roofline model (dahlsim_spec.h) give every task of the covered training
 * setups (the task catalogue, dahl_catalogue.h) a duration on each worker architecture; those become StarPU
 * history perf models, next to a SimGrid platform and bus files for the spec's node, under DIR/NAME/ in the
 * layout `dahlsim calibrate` gives measured machines (see dahlsim_machine.h). Everything is written to a
 * temporary directory beside DIR/NAME and renamed into place, so a failure never leaves half a machine, and
 * a measured calibration is never overwritten. With --fit, the CPU efficiencies are first fitted to a
 * measured calibration's perf models. This file holds the steps; the command is sim/cmd/machine.c. */
#include "dahlsim_machine.h"

#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_codelets.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XPATH (PATH_MAX + 512) /* paths built from another path buffer */

int dahlsim_machine_write_sampling(const char *sampling, const char *name, const struct dahlsim_spec *spec,
                                   const char *spec_path, const struct dahl_catalogue *cat, char *err,
                                   size_t err_size)
{
    char dir[XPATH];
    const char *const subdirs[] = {"codelets/45", "bus"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(dir, sizeof(dir), "%s/%s", sampling, subdirs[i]);
        int ret = dahlsim_make_dirs(dir);
        if (ret != 0) {
            snprintf(err, err_size, "%s: cannot create: %s", dir, strerror(-ret));
            return ret;
        }
    }
    int ret = dahlsim_machine_write_models(sampling, name, spec, cat, err, err_size);
    if (ret == 0)
        ret = dahlsim_machine_write_bus(sampling, name, spec_path, spec, err, err_size);
    return ret;
}

/* What the machine is made from: the spec (and its parsed file, for the manifest), the tasks of the covered
 * setups, and what --fit found. */
struct synth_input {
    struct dahlsim_spec spec;
    void *spec_json;
    struct dahl_catalogue cat;
    struct dahlsim_machine_fit fit;
};

/* Loads the spec, catalogues the covered setups' tasks and fits the CPU side with --fit. Returns 0, or a
 * negative errno after printing the error (-EINVAL: a bad spec or fit). */
static int prepare(const struct dahlsim_synth_opts *o, struct synth_input *in)
{
    char err[2 * XPATH];
    if (dahlsim_spec_load(o->spec_path, &in->spec, &in->spec_json, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        fprintf(stderr, "hint: the spec format is documented in platforms/specs/README.md\n");
        return -EINVAL;
    }
    if (dahlsim_spec_at_pstate(&in->spec, (int)o->pstate) != 0) {
        dahlsim_error("--pstate: expected a state of %s's cpu.pstates (1 to %d), got %ld", o->spec_path,
                      in->spec.cpu.npstates, o->pstate);
        return -EINVAL;
    }
    for (int i = 0; i < o->ncovers; i++) {
        if (dahlsim_machine_cover_catalogue(&o->covers[i], &in->cat, err, sizeof(err)) != 0) {
            dahlsim_error("--cover %s: %s", o->covers[i].dataset, err);
            return -EIO;
        }
    }
    if (o->fit != NULL && dahlsim_machine_fit_cpu(o->fit, &in->spec, &in->cat, &in->fit) != 0)
        return -EINVAL;
    return 0;
}

/* o->out/NAME into final, once o->out exists and NAME there is either absent or a roofline machine. Returns
 * 0, or -EINVAL after printing the error. */
static int check_destination(const struct dahlsim_synth_opts *o, char *final, size_t size)
{
    int ret = dahlsim_make_dirs(o->out);
    if (ret != 0) {
        dahlsim_error("--out: cannot create %s: %s", o->out, strerror(-ret));
        return -EINVAL;
    }
    snprintf(final, size, "%s/%s", o->out, o->machine);
    char source[64];
    dahlsim_machine_existing_source(final, source, sizeof(source));
    struct stat st;
    if (lstat(final, &st) == 0 && strcmp(source, "roofline") != 0) {
        dahlsim_error("%s exists and is not a roofline machine (its manifest.json says \"source\": \"%s\"): "
                      "refusing to overwrite it",
                      final, source[0] != '\0' ? source : "<none>");
        fprintf(stderr, "hint: pick another --machine NAME, or remove %s yourself\n", final);
        return -EINVAL;
    }
    return 0;
}

/* Into place: the previous roofline machine aside, tmp renamed to final, the old one removed. 0, or -1 after
 * the error line (tmp is left for the caller to remove). */
static int swap_in(const struct dahlsim_synth_opts *o, const char *tmp, const char *final)
{
    char old[XPATH];
    old[0] = '\0';
    struct stat st;
    if (lstat(final, &st) == 0) {
        snprintf(old, sizeof(old), "%s/.%s.old-%ld", o->out, o->machine, (long)getpid());
        if (rename(final, old) != 0) {
            dahlsim_error("cannot move %s aside: %s", final, strerror(errno));
            return -1;
        }
    }
    if (rename(tmp, final) != 0) {
        dahlsim_error("cannot rename %s to %s: %s", tmp, final, strerror(errno));
        if (old[0] != '\0' && rename(old, final) != 0)
            fprintf(stderr, "dahlsim: the previous machine is in %s\n", old);
        return -1;
    }
    if (old[0] != '\0')
        dahlsim_remove_tree(old);
    return 0;
}

/* Writes the machine in a temporary directory beside final, then swaps it in. Returns 0, or -EIO after the
 * error line. */
static int write_machine(const struct dahlsim_synth_opts *o, struct synth_input *in, const char *final)
{
    char err[2 * XPATH], tmp[XPATH], sampling[XPATH + 16];
    snprintf(tmp, sizeof(tmp), "%s/.%s.synth-XXXXXX", o->out, o->machine);
    if (mkdtemp(tmp) == NULL) {
        dahlsim_error("%s: cannot create a temporary directory: %s", o->out, strerror(errno));
        return -EIO;
    }
    snprintf(sampling, sizeof(sampling), "%s/sampling", tmp);
    int ret = dahlsim_machine_write_sampling(sampling, o->machine, &in->spec, o->spec_path, &in->cat, err,
                                             sizeof(err));
    if (ret == 0) {
        ret = dahlsim_machine_manifest_write(tmp, o, &in->spec, in->spec_json, &in->cat, &in->fit, err,
                                             sizeof(err));
        in->spec_json = NULL; /* taken over */
    }
    if (ret != 0)
        dahlsim_error("%s", err);
    else
        ret = swap_in(o, tmp, final);
    if (ret != 0) {
        dahlsim_remove_tree(tmp);
        return -EIO;
    }
    return 0;
}

static void print_summary(const struct dahlsim_synth_opts *o, const struct dahlsim_spec *spec,
                          const struct dahl_catalogue *cat, const struct dahlsim_machine_fit *fit, const char *final)
{
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    if (o->fit != NULL) {
        fprintf(stderr, "dahlsim machine synth: CPU fitted to %s: task overhead %.3g us", o->fit,
                spec->cpu.task_overhead_us);
        if (fit->overhead_fitted)
            fprintf(stderr, " (median of %d near-empty tasks)", fit->overhead_entries);
        fputc('\n', stderr);
        for (size_t k = 0; k < nsymbols; k++) {
            const struct dahlsim_machine_fit_result *f = &fit->symbols[k];
            if (f->entries > 0)
                fprintf(stderr, "  %-30s %3d entries  efficiency %-8.3g median error %3.0f %% -> %3.0f %%\n",
                        symbols[k], f->entries, spec->eff[DAHLSIM_ARCH_CPU][k].compute, 100 * f->error_before,
                        100 * f->error_after);
        }
    }
    fprintf(stderr, "dahlsim machine synth: wrote %s: %zu task shapes x %d architecture%s, %d CPU core%s%s\n", final,
            cat->n, 1 + (spec->gpu.count > 0), spec->gpu.count > 0 ? "s" : "", spec->cpu.cores,
            spec->cpu.cores > 1 ? "s" : "", spec->gpu.count > 0 ? " + GPUs" : "");
    for (int i = 0; i < o->ncovers; i++) {
        fprintf(stderr, "  %s %s: one batch-%d step, tasks alone: %.3f ms on one core", o->covers[i].dataset,
                o->covers[i].model, DAHLSIM_MACHINE_STEP_BATCH,
                dahlsim_machine_step_us(&o->covers[i], spec, DAHLSIM_ARCH_CPU) / 1e3);
        if (spec->gpu.count > 0)
            fprintf(stderr, ", %.3f ms on one GPU",
                    dahlsim_machine_step_us(&o->covers[i], spec, DAHLSIM_ARCH_CUDA) / 1e3);
        fputc('\n', stderr);
    }
}

int dahlsim_machine_synth(const struct dahlsim_synth_opts *o)
{
    struct synth_input in = {.spec_json = NULL};
    dahl_catalogue_init(&in.cat);
    char final[XPATH];
    int code = prepare(o, &in);
    if (code == 0)
        code = check_destination(o, final, sizeof(final));
    if (code == 0)
        code = write_machine(o, &in, final);
    if (code == 0 && !o->quiet)
        print_summary(o, &in.spec, &in.cat, &in.fit, final);
    cJSON_Delete(in.spec_json);
    dahl_catalogue_fini(&in.cat);
    return code;
}
