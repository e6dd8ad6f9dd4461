/* `dahlsim machine power NAME`: gives an existing calibration (measured or synthesized) power figures measured
 * elsewhere (nvidia-smi on a GPU node, RAPL, a wattmeter): each CPU and GPU host of its platform gets the
 * idle and full-load watts, MAIN and RAM 0 W, the platform's configuration turns SimGrid's host energy plugin
 * on, and manifest.json records the figures and where they come from. See dahlsim_machine.h. */
#include "dahlsim_machine.h"
#include "dahlsim_fs.h"
#include "dahlsim_outfile.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Whether line (up to its end) holds one of the power properties, which a new set replaces. */
static bool power_prop(const char *line)
{
    return strstr(line, "id=\"wattage_per_state\"") != NULL || strstr(line, "id=\"wattage_off\"") != NULL ||
           strstr(line, "id=\"dahl_power\"") != NULL || strstr(line, "value=\"host_energy\"") != NULL;
}

/* The watts a host gets: a CPU core's, a GPU's, or none for MAIN and RAM; false for other hosts. */
static bool host_watts(const char *line, const struct dahlsim_power_opts *o, double *idle, double *full)
{
    const char *id = strstr(line, "<host id=\"");
    if (id == NULL)
        return false;
    id += strlen("<host id=\"");
    if (strncmp(id, "CPU", 3) == 0) {
        *idle = o->cpu_idle_w;
        *full = o->cpu_full_w;
    } else if (strncmp(id, "CUDA", 4) == 0) {
        *idle = o->gpu_idle_w;
        *full = o->gpu_full_w;
    } else {
        *idle = *full = 0;
    }
    return true;
}

/* The platform text with the power figures: every host's own, the plugin in the configuration. */
static char *with_power(const char *xml, const struct dahlsim_power_opts *o, int *ngpus)
{
    size_t cap = strlen(xml) * 2 + 4096, used = 0;
    char *out = malloc(cap);
    if (out == NULL)
        return NULL;
    *ngpus = 0;
    bool configured = false;
    const char *p = xml;
    while (*p != '\0') {
        const char *eol = strchr(p, '\n');
        size_t len = eol != NULL ? (size_t)(eol - p + 1) : strlen(p);
        char line[4096];
        snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
        p += len;
        if (used + len + 1024 > cap) {
            char *grown = realloc(out, cap *= 2);
            if (grown == NULL) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        if (power_prop(line))
            continue; /* replaced below */
        double idle, full;
        if (host_watts(line, o, &idle, &full)) {
            *ngpus += strstr(line, "<host id=\"CUDA") != NULL;
            char *close = strstr(line, "/>");
            bool self_closed = close != NULL && strstr(line, "</host>") == NULL;
            if (self_closed)
                *close = '\0'; /* "<host ... " then the props, then </host> */
            else
                line[strcspn(line, "\n")] = '\0';
            used += (size_t)snprintf(out + used, cap - used, "%s%s\n", line, self_closed ? ">" : "");
            used += (size_t)snprintf(out + used, cap - used, "      <prop id=\"wattage_per_state\" value=\"%.6g:%.6g\"/>\n",
                                     idle, full);
            if (full > 0)
                used += (size_t)snprintf(out + used, cap - used,
                                         "      <prop id=\"wattage_off\" value=\"0\"/>\n      <prop id=\"dahl_power\" "
                                         "value=\"%s\"/>\n",
                                         o->source);
            if (self_closed)
                used += (size_t)snprintf(out + used, cap - used, "    </host>\n");
            continue;
        }
        memcpy(out + used, line, strlen(line));
        used += strlen(line);
        if (!configured && strstr(line, "<config") != NULL) {
            used += (size_t)snprintf(out + used, cap - used, "    <prop id=\"plugin\" value=\"host_energy\"></prop>\n");
            configured = true;
        }
    }
    out[used] = '\0';
    if (!configured) { /* no configuration block: one right after <platform ...> */
        char *at = strstr(out, "<platform");
        char *end = at != NULL ? strchr(at, '>') : NULL;
        if (end == NULL) {
            free(out);
            return NULL;
        }
        const char *block = "\n  <config id=\"General\">\n    <prop id=\"plugin\" value=\"host_energy\"></prop>\n"
                            "  </config>";
        size_t off = (size_t)(end - out) + 1, blen = strlen(block);
        memmove(out + off + blen, out + off, used - off + 1);
        memcpy(out + off, block, blen);
    }
    return out;
}

/* manifest.json's "power": the figures, their source and when they were given. */
static int record(const char *dir, const struct dahlsim_power_opts *o, char *err, size_t err_size)
{
    char path[PATH_MAX + 32], why[160];
    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    cJSON *m;
    if (dahlsim_json_load(path, SIZE_MAX, &m, why, sizeof(why)) != 0) {
        snprintf(err, err_size, "%.*s: %s", (int)(err_size > 200 ? err_size - 200 : 0), path, why);
        return -EIO;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(m, "power");
    cJSON *pw = cJSON_AddObjectToObject(m, "power");
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    bool ok = pw != NULL && cJSON_AddStringToObject(pw, "source", o->source) &&
              cJSON_AddNumberToObject(pw, "cpu_idle_w", o->cpu_idle_w) &&
              cJSON_AddNumberToObject(pw, "cpu_full_w", o->cpu_full_w) &&
              (!o->gpu || (cJSON_AddNumberToObject(pw, "gpu_idle_w", o->gpu_idle_w) &&
                           cJSON_AddNumberToObject(pw, "gpu_full_w", o->gpu_full_w))) &&
              cJSON_AddStringToObject(pw, "date", date) &&
              cJSON_AddStringToObject(pw, "command", "dahlsim machine power");
    int ret = ok ? dahlsim_json_save(m, path, err, err_size) : -ENOMEM;
    if (!ok)
        snprintf(err, err_size, "%s: out of memory", path);
    cJSON_Delete(m);
    return ret;
}

int dahlsim_machine_power(const struct dahlsim_power_opts *o)
{
    char dir[PATH_MAX], path[PATH_MAX + 128], err[PATH_MAX + 256];
    snprintf(dir, sizeof(dir), "%s/%s", o->dir, o->machine);
    snprintf(path, sizeof(path), "%s/sampling/bus/%s.platform.v4.xml", dir, o->machine);
    char *xml = dahlsim_read_text(path, SIZE_MAX);
    if (xml == NULL) {
        dahlsim_error("machine power: %s: %s (expected a calibration of %s)", path, strerror(errno), o->dir);
        return -EINVAL;
    }
    int ngpus;
    char *out = with_power(xml, o, &ngpus);
    free(xml);
    if (out == NULL) {
        dahlsim_error("machine power: %s: not a platform this command can edit", path);
        return -EINVAL;
    }
    if (ngpus > 0 && !o->gpu) {
        dahlsim_error("machine power: --gpu: missing (expected the GPUs' watts too: %s has %d, and energy counts "
                      "every device or none)", o->machine, ngpus);
        free(out);
        return -EINVAL;
    }
    /* beside it, then renamed over it: a failure leaves the calibration as it was */
    struct dahlsim_outfile f;
    char tmp[PATH_MAX + 160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int ret = dahlsim_outfile_open(&f, err, sizeof(err), "%s", tmp);
    if (ret == 0) {
        fputs(out, f.f);
        ret = dahlsim_outfile_close(&f, err, sizeof(err));
    }
    if (ret == 0 && rename(tmp, path) != 0) {
        snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
        ret = -EIO;
    }
    if (ret != 0)
        unlink(tmp);
    free(out);
    if (ret == 0)
        ret = record(dir, o, err, sizeof(err));
    if (ret != 0) {
        dahlsim_error("machine power: %s", err);
        return -EIO;
    }
    return 0;
}
