#!/usr/bin/env bash
# The layers' one-way rules, read from the sources (STYLE.md "Layout"): a file of a StarPU-free part includes
# neither StarPU, SimGrid nor MPI, and of dahl's own headers only those of the parts below it; and no two
# modules of sim/ include each other's headers in a circle (a module: dahlsim_X.c with dahlsim_X.h and its
# dahlsim_X_internal.h). Prints every offending include as FILE:LINE and exits 1; exit 0 when the tree keeps
# the rules.
# common/ is below every folder: any of them may include its headers; its own files include no other folder's.
# The program (sim/program) may include StarPU but no header of the front end (sim/, sim/cmd).
# --selftest: runs the check on copies of common/, kernels/, sim/, runtime/records/, runtime/model/ and
# runtime's headers with a StarPU include (in sim/core, sim/trace, sim/scenario, runtime/model), a header from
# above (in sim/core, sim/trace, sim/lab, sim/program, runtime/records, common, kernels/cpu) and a circle put in, and fails
# unless each is refused (so the check itself can fail).
# usage: check_layers.sh [--selftest] SOURCE_DIR
set -euo pipefail
if [ "${1:-}" = --selftest ]; then
    src=${2:?usage: check_layers.sh --selftest SOURCE_DIR}
    self=$(readlink -f "$0")
    work=$(mktemp -d /tmp/dahlsim-layers-XXXXXX)
    trap 'rm -rf "$work"' EXIT
    refused() { # $1: what was put in; $2: the message expected
        local out
        if out=$("$self" "$work/tree" 2>&1); then
            printf 'check_layers: selftest: %s was not refused\n' "$1" >&2
            exit 1
        fi
        grep -q "$2" <<<"$out" || { printf 'check_layers: selftest: %s: unexpected output:\n%s\n' "$1" "$out" >&2; exit 1; }
    }
    fresh() {
        rm -rf "$work/tree"
        mkdir -p "$work/tree/runtime"
        cp -r "$src/common" "$src/kernels" "$src/sim" "$work/tree/"
        cp -r "$src/runtime/records" "$src/runtime/model" "$work/tree/runtime/"
        cp "$src"/runtime/*.h "$work/tree/runtime/"
    }
    fresh
    "$self" "$work/tree" || { echo "check_layers: selftest: the tree as it is does not pass" >&2; exit 1; }
    sed -i '0,/^#include/s//#include <starpu.h>\n#include/' "$work/tree/sim/core/dahlsim_fs.c"
    refused "starpu.h in sim/core" "dahlsim_fs.c:.*includes no StarPU"
    fresh
    sed -i '0,/^#include/s//#include "dahlsim_scenario.h"\n#include/' "$work/tree/sim/core/dahlsim_spawn.c"
    refused "a header from above in sim/core" "dahlsim_spawn.c:.*not a header of sim/core"
    fresh
    sed -i '0,/^#include/s//#include <starpu_profiling.h>\n#include/' "$work/tree/sim/trace/paje.c"
    refused "starpu_profiling.h in sim/trace" "paje.c:.*includes no StarPU"
    fresh
    sed -i '0,/^#include/s//#include "dahl_profile.h"\n#include/' "$work/tree/sim/trace/summary.c"
    refused "a runtime header in sim/trace" "summary.c:.*not a header of sim/trace or of sim/core runtime/records"
    fresh
    sed -i '0,/^#include/s//#include "dahlsim_trace.h"\n#include/' "$work/tree/runtime/records/dahl_records.h"
    refused "a header from above in runtime/records" "dahl_records.h:.*not a header of runtime/records"
    fresh
    sed -i '0,/^#include/s//#include <starpu_hash.h>\n#include/' "$work/tree/runtime/model/dahl_footprint.c"
    refused "starpu_hash.h in runtime/model" "dahl_footprint.c:.*includes no StarPU"
    fresh
    sed -i '0,/^#include/s//#include "dahl_engine.h"\n#include/' "$work/tree/sim/lab/emulate.c"
    refused "a runtime header in sim/lab" "emulate.c:.*not a header of sim/lab or of sim/core runtime/model kernels"
    fresh
    sed -i '0,/^#include/s//#include "dahl_kernels.h"\n#include/' "$work/tree/common/dahl_array.h"
    refused "a kernels header in common" "dahl_array.h:.*not a header of common"
    fresh
    sed -i '0,/^#include/s//#include "dahlsim_run.h"\n#include/' "$work/tree/sim/scenario/dahlsim_scenario.h"
    refused "a circle run -> scenario -> run" "in a circle"
    fresh
    sed -i '0,/^#include/s//#include <starpu.h>\n#include/' "$work/tree/sim/scenario/dahlsim_sweep.c"
    refused "starpu.h in sim/scenario" "dahlsim_sweep.c:.*includes no StarPU"
    fresh
    sed -i '0,/^#include/s//#include "dahlsim_cli.h"\n#include/' "$work/tree/sim/program/train.c"
    refused "a front-end header in sim/program" "train.c:.*not a header of sim/program"
    fresh
    sed -i '0,/^#include/s//#include "dahl_engine.h"\n#include/' "$work/tree/kernels/cpu/pool.c"
    refused "a runtime header in kernels/cpu" "pool.c:.*not a header of kernels/cpu or of kernels common"
    echo "check_layers: selftest: all twelve refused"
    exit 0
fi
src=${1:?usage: check_layers.sh [--selftest] SOURCE_DIR}
cd "$src"

status=0
# One rule a line: the folder, then the folders whose headers its files may include (besides its own);
# STARPU among them: StarPU's, SimGrid's and MPI's headers too (the program, the one part that links them).
# dahlsim_commit.h, generated into the build directory, goes anywhere.
rules=(
    "common"
    "kernels common"
    "runtime/records common"
    "runtime/model kernels common"
    "runtime/model/layers runtime/model kernels common"
    "kernels/cpu kernels common"
    "kernels/cuda kernels common"
    "runtime STARPU runtime/model runtime/records kernels kernels/cuda common"
    "runtime/codelets STARPU runtime runtime/model runtime/records kernels kernels/cuda common"
    "sim/core common"
    "sim/trace sim/core runtime/records common"
    "sim/lab sim/core runtime/model kernels common"
    "sim/scenario sim/lab sim/trace sim/core runtime/model runtime/records kernels common"
    "sim/program STARPU runtime runtime/model runtime/records kernels sim/lab sim/trace sim/core common"
)

forbidden_system='^#include[[:space:]]*<(starpu|simgrid|smpi|mpi|xbt)[^>]*>'
for rule in "${rules[@]}"; do
    read -r dir allowed <<<"$rule"
    [ -d "$dir" ] || continue
    starpu=false
    if [[ " $allowed " == *" STARPU "* ]]; then
        starpu=true
        allowed=${allowed/STARPU /}
    fi
    # the headers dir may include: those of dir and of its allowed folders (a set, looked up without a fork)
    declare -A own=()
    while IFS= read -r h; do
        own[$h]=1
    done < <(find "$dir" $allowed -maxdepth 1 \( -name '*.h' -o -name '*.cuh' \) -printf '%f\n' 2>/dev/null)
    while IFS= read -r -d '' file; do
        while IFS=: read -r line text; do
            if [[ $text =~ $forbidden_system ]]; then
                $starpu && continue
                printf '%s:%s: %s: %s includes no StarPU, SimGrid or MPI header\n' "$file" "$line" "$text" "$dir"
                status=1
            elif [[ $text =~ ^#include[[:space:]]*\"([^\"]+)\" ]]; then
                header=${BASH_REMATCH[1]##*/}
                if [ "$header" != dahlsim_commit.h ] && [ -z "${own[$header]:-}" ]; then
                    printf '%s:%s: %s: not a header of %s%s\n' "$file" "$line" "$text" "$dir" \
                        "${allowed:+ or of $allowed}"
                    status=1
                fi
            fi
        done < <(grep -n '^#include' "$file" || true)
    done < <(find "$dir" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print0)
    unset own
done

# Circles between sim/ modules: one edge per include of another module's header, sorted topologically.
edges=$(find sim -name 'dahlsim_*.[ch]' | while read -r file; do
    # (a module's _internal header, shared by its own files only, belongs to the module)
    from=$(basename "$file" | sed 's/\.[ch]$//; s/_internal$//')
    # (a file without such an include is no failure: under pipefail it would end the script when last)
    { grep -o '^#include[[:space:]]*"dahlsim_[a-z_]*\.h"' "$file" || true; } |
        sed 's/.*"\(dahlsim_[a-z_]*\)\.h"/\1/; s/_internal$//' |
        while read -r to; do
            [ "$to" = "$from" ] || [ "$to" = dahlsim_commit ] || printf '%s %s\n' "$from" "$to"
        done
done)
if ! loops=$(tsort 2>&1 >/dev/null <<<"$edges"); then
    printf 'sim/: modules include each other in a circle:\n%s\n' "$loops"
    status=1
fi
exit $status
