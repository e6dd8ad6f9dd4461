/* The figures registry's logic (sim/core/dahlsim_figures.c): what the registry check refuses, values read
 * from JSON outputs, quotes found, rendered and told apart. The registry's own figures are checked by the
 * CTests figures_quotes and figures_fast (tests/CMakeLists.txt). */
#include "dahlsim_figures.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char good[] =
    "{\"runs\": [{\"id\": \"default\", \"command\": \"dahlsim run x.json --out $OUT\", \"fast\": true}],"
    " \"figures\": [{\"id\": \"default.sps\", \"run\": \"default\", \"file\": \"results.json\","
    " \"values\": [{\"path\": \"samples\", \"over\": \"makespan_s\", \"value\": 6459.5},"
    " {\"path\": \"makespan_s\", \"value\": 1.27}],"
    " \"quotes\": [{\"file\": \"README.md\", \"text\": \"simulated {} samples/s ({} s)\", \"format\": [\"%.0f\", \"%.2f\"]},"
    " {\"file\": \"docs/x.md\", \"text\": \"took {} ms\", \"format\": \"%.1f\", \"scale\": 1000, \"values\": [1]}]}]}";

/* The registry check of good with from replaced by to: its return and message. */
static int check_edited(const char *from, const char *to, char *err, size_t err_size)
{
    char text[2048];
    const char *at = strstr(good, from);
    cr_assert_not_null(at, "\"%s\" is not in the good registry", from);
    snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    cJSON *reg = cJSON_Parse(text);
    cr_assert_not_null(reg, "%s", text);
    err[0] = '\0';
    int ret = dahlsim_figures_check_registry(reg, err, err_size);
    cJSON_Delete(reg);
    return ret;
}

Test(figures, registry_check_accepts_good_and_names_each_bad_field)
{
    char err[512];
    cr_assert_eq(check_edited("default.sps", "default.sps", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(check_edited("{\"path\": \"makespan_s\", \"value\": 1.27}", "{\"mean\": [0], \"value\": 6459.5}", err,
                              sizeof(err)), 0, "%s", err);
    struct {
        const char *from, *to, *says;
    } bad[] = {
        {"\"run\": \"default\"", "\"run\": \"nodefault\"", "figures[0].\"run\": expected the id of one of"},
        {"\"value\": 6459.5", "\"value\": \"6459\"", "figures[0].values[0].\"value\": expected a number"},
        {"\"%.0f\"", "\"%s\"", "quotes[0].\"format\": expected a format with one %f, %e or %g conversion"},
        {"\"%.0f\"", "\"%.0f%n\"", "\"format\": expected a format"},
        {"[\"%.0f\", \"%.2f\"]", "[\"%.0f\"]", "\"format\": expected 2 items"},
        {"samples/s ({} s)", "samples/s", "\"text\": expected 2 \"{}\""},
        {"simulated {} samples/s", "{} samples/s", "\"text\": expected 2 \"{}\" after some text"},
        {"\"values\": [1]", "\"values\": [2]", "\"values\": expected indices of the figure's 2 values"},
        {"\"values\": [{", "\"path\": \"x\", \"values\": [{", "expected \"path\" and \"value\", or \"values\""},
        {"\"quotes\"", "\"quote\"", "unknown key \"quote\""},
        {"\"fast\": true", "\"fast\": 1", "runs[0].\"fast\": expected true or false"},
        {"\"command\": \"dahlsim", "\"commands\": \"dahlsim", "runs[0]: unknown key \"commands\""},
        {"{\"path\": \"makespan_s\", \"value\": 1.27}", "{\"mean\": [0, 1], \"value\": 1.27}",
         "values[1]: expected \"mean\" to be [I, J, ...], indices of earlier values"},
        {"{\"path\": \"makespan_s\", \"value\": 1.27}", "{\"mean\": [], \"value\": 1.27}", "expected \"mean\""},
        {"{\"path\": \"makespan_s\", \"value\": 1.27}", "{\"mean\": [0], \"path\": \"x\", \"value\": 1.27}",
         "expected \"mean\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(check_edited(bad[i].from, bad[i].to, err, sizeof(err)), -EINVAL, "%s accepted", bad[i].to);
        cr_expect_not_null(strstr(err, bad[i].says), "%s: \"%s\" does not say \"%s\"", bad[i].to, err, bad[i].says);
    }
}

Test(figures, registry_check_refuses_a_repeated_id)
{
    char text[2048], err[256];
    snprintf(text, sizeof(text),
             "{\"runs\": [{\"id\": \"a\", \"command\": \"true\"}, {\"id\": \"a\", \"command\": \"false\"}],"
             " \"figures\": []}");
    cJSON *reg = cJSON_Parse(text);
    cr_assert_eq(dahlsim_figures_check_registry(reg, err, sizeof(err)), -EINVAL);
    cr_expect_not_null(strstr(err, "runs[1].\"id\": \"a\" is already a run's id"), "%s", err);
    cJSON_Delete(reg);
}

Test(figures, json_path_reads_keys_and_indices)
{
    cJSON *doc = cJSON_Parse("{\"makespan_s\": 1.25, \"plan\": {\"candidates\": [{\"step_s\": 0.5},"
                             " {\"step_s\": 0.0625, \"name\": \"b\"}]}}");
    char err[256];
    double v = 0;
    cr_assert_eq(dahlsim_json_path_number(doc, "makespan_s", &v, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(v, 1.25);
    cr_assert_eq(dahlsim_json_path_number(doc, "plan.candidates[1].step_s", &v, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(v, 0.0625);
    cr_expect_eq(dahlsim_json_path_number(doc, "plan.candidates[2].step_s", &v, err, sizeof(err)), -ENOENT);
    cr_expect_eq(dahlsim_json_path_number(doc, "plan.candidates[1].name", &v, err, sizeof(err)), -EINVAL);
    cr_expect_not_null(strstr(err, "expected a number"), "%s", err);
    cr_expect_eq(dahlsim_json_path_number(doc, "plan.candidates[x]", &v, err, sizeof(err)), -EINVAL);
    cJSON_Delete(doc);
    /* a verdict, and a number inside a text */
    doc = cJSON_Parse("{\"holds\": true, \"choice\": \"auto: 2 of 1, 2, 4; predicted step 1.12535 ms (grain 1: "
                      "-1.5e-3 ms)\"}");
    cr_assert_eq(dahlsim_json_path_number(doc, "holds", &v, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(v, 1);
    cr_assert_eq(dahlsim_json_path_number(doc, "choice#4", &v, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(v, 1.12535);
    cr_assert_eq(dahlsim_json_path_number(doc, "choice#6", &v, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(v, -1.5e-3);
    cr_expect_eq(dahlsim_json_path_number(doc, "choice#7", &v, err, sizeof(err)), -EINVAL);
    cr_expect_eq(dahlsim_json_path_number(doc, "holds#0", &v, err, sizeof(err)), -EINVAL);
    cJSON_Delete(doc);
}

Test(figures, quotes_are_found_once_rendered_and_moved_numbers_seen)
{
    const char page[] = "# Title\n\nIt prints a simulated 6592 samples/s (1.24 s).\nerror -7.9 % here, 3e-05 J\n"
                        "| lws | 12.5 ms | 3.2 J |\n";
    size_t at[DAHLSIM_FIGURES_SLOTS], len[DAHLSIM_FIGURES_SLOTS];
    int line;
    cr_assert_eq(dahlsim_figures_find_quote(page, "simulated {} samples/s ({} s)", at, len, &line), 1);
    cr_expect_eq(line, 3);
    cr_expect_eq(len[0], 4);
    cr_expect_eq(strncmp(page + at[0], "6592", 4), 0);
    cr_expect_eq(strncmp(page + at[1], "1.24", len[1]), 0);
    char buf[64];
    dahlsim_figures_render(8192 / 1.268356, 1, "%.0f", buf, sizeof(buf));
    cr_expect_str_eq(buf, "6459");
    cr_expect_neq(strncmp(page + at[0], buf, len[0]), 0, "a moved figure must not match its old quote");
    cr_assert_eq(dahlsim_figures_find_quote(page, "error {} %", at, len, &line), 1);
    cr_expect_eq(strncmp(page + at[0], "-7.9", len[0]), 0);
    dahlsim_figures_render(-0.0789, 100, "%+.1f", buf, sizeof(buf));
    cr_expect_str_eq(buf, "-7.9");
    cr_assert_eq(dahlsim_figures_find_quote(page, "here, {} J", at, len, &line), 1);
    cr_expect_eq(strncmp(page + at[0], "3e-05", len[0]), 0);
    /* a table row: its labels anchor it, every number a slot */
    cr_assert_eq(dahlsim_figures_find_quote(page, "| lws | {} ms | {} J |", at, len, &line), 1);
    cr_expect_eq(line, 5);
    cr_expect_eq(strncmp(page + at[1], "3.2", len[1]), 0);
    cr_expect_eq(dahlsim_figures_slots("| lws | {} ms | {} J |"), 2);
    /* not a number in the slot, or the text twice: not one good match */
    cr_expect_eq(dahlsim_figures_find_quote(page, "It {} a", at, len, &line), 0);
    cr_expect_eq(dahlsim_figures_find_quote("x 1 y, x 2 y", "x {} y", at, len, &line), 2);
}

Test(figures, one_ulp_is_a_moved_figure)
{
    /* what --check compares: the pinned value read back from its printed form against today's, exactly */
    double pinned = 1.2683561111111111;
    char text[64];
    snprintf(text, sizeof(text), "{\"v\": %.17g}", nextafter(pinned, 2));
    cJSON *doc = cJSON_Parse(text);
    double now;
    char err[128];
    cr_assert_eq(dahlsim_json_path_number(doc, "v", &now, err, sizeof(err)), 0);
    cr_expect_neq(now, pinned);
    cr_expect_eq(now, nextafter(pinned, 2));
    cJSON_Delete(doc);
}
