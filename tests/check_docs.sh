#!/usr/bin/env bash
# The documentation as a newcomer meets it: every relative link of README.md, docs/ and the folders' READMEs
# resolves to a file (and a #fragment to a heading of it), and every `build/dahlsim COMMAND` of the README's
# code blocks names a command whose --help works. Prints each broken link or command and exits 1.
# usage: check_docs.sh SOURCE_DIR DAHLSIM_BINARY
set -euo pipefail
src=${1:?usage: check_docs.sh SOURCE_DIR DAHLSIM_BINARY}
dahlsim=${2:?usage: check_docs.sh SOURCE_DIR DAHLSIM_BINARY}
cd "$src"
status=0

# GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'.
anchors() { grep -E '^#+ ' "$1" | sed -E 's/^#+ +//' | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'; }

pages=(README.md docs/*.md */README.md platforms/specs/README.md)
for page in "${pages[@]}"; do
    [ -f "$page" ] || continue
    dir=$(dirname "$page")
    while IFS= read -r target; do
        path=${target%%#*}
        fragment=
        [[ $target == *"#"* ]] && fragment=${target#*#}
        file=$page
        if [ -n "$path" ]; then
            file=$dir/$path
            if [ ! -e "$file" ]; then
                printf '%s: broken link: %s\n' "$page" "$target"
                status=1
                continue
            fi
        fi
        if [ -n "$fragment" ] && [ -f "$file" ] && ! anchors "$file" | grep -qxF "$fragment"; then
            printf '%s: no heading "%s" in %s\n' "$page" "$fragment" "$file"
            status=1
        fi
    done < <(grep -oE '\]\([^)[:space:]]+\)' "$page" | sed -E 's/^\]\(//; s/\)$//' | grep -vE '^[a-z]+:' || true)
done

# The README's commands: an indented code line "build/dahlsim WORD ..." (a WORD of letters: the command).
while IFS= read -r cmd; do
    if ! "$dahlsim" "$cmd" --help >/dev/null 2>&1; then
        printf 'README.md: "build/dahlsim %s --help" fails\n' "$cmd"
        status=1
    fi
done < <(grep -E '^    build/dahlsim [a-z]' README.md | awk '{ print $2 }' | sort -u)
exit $status
