#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Mutation testing of the test suites (its own script; CI runs only --check: the unit test
# mutations_apply, in a git checkout). Each mutation of
# tests/mutations/mutations.txt (one substitution of code text inside a named function of a
# named file) is applied alone to a scratch copy of the tree in /tmp, the copy is rebuilt and
# the suites are run; a table says, per mutation, whether a test caught it and which.
#
#   scripts/mutate.sh [options] [MUTATION...]      (default: every mutation of the list)
#     --list FILE        the mutations (default tests/mutations/mutations.txt)
#     --suites "S ..."   meson suites to run (default "unit fuzz integration": no root needed)
#     --e2e "T ..."      e2e tests to run as well, by name (root only; ignored otherwise)
#     --user U           as root, run the suites as user U (default nobody, so that only
#                        tests that run without root can catch a mutation; "root" runs them
#                        as root); the e2e tests run as root
#     --rev REV          mutate commit REV (a `git worktree add` of it) instead of a copy of
#                        the working tree as it is (tracked and untracked files, not ignored,
#                        in a git checkout of its own)
#     --check            only check that every mutation applies to the tree and show each
#                        one's diff (no build, no test)
#     --keep             keep the scratch directory (its path is printed)
#     -j N               meson test processes (default 2)
#     --timeout-mult X   meson test --timeout-multiplier (default 1)
#
# The scratch copy is set up once (meson setup, -Dwerror=false so that a mutation that only
# warns still builds) and built once unmutated: the selected tests must pass there (a test
# that fails unmutated is reported and not counted as catching anything; nor is the unit
# test mutations_apply, which fails on any applied mutation). Then, for each mutation: apply
# it, ninja, run the tests, put the file back. The source tree is only read.
#
# Results: "caught" (at least one test failed or timed out: the table names them), "SURVIVED"
# (every test passed), "NOT APPLIED" (the file, function or text is not there, or the text
# occurs more than once: the mutation must be re-anchored), "BUILD FAILED" (the mutated tree
# does not compile: fix the mutation), "TEST ERROR" (not as many tests ran as unmutated: the
# scratch directory is kept). Exit 0 if every mutation was caught, 1 if one survived, 2 if
# one could not be applied, built or tested, or on errors.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST=$ROOT/tests/mutations/mutations.txt
SUITES="unit fuzz integration"
E2E=""
RUN_USER=nobody
REV=""
CHECK=0
KEEP=0
JOBS=2
TMULT=1
ONLY=()

usage() {
    sed -n '5,/^$/s/^# \{0,1\}//p' "$0"
}

while (($#)); do
    case $1 in
    --list | --suites | --e2e | --user | --rev | -j | --timeout-mult)
        (($# >= 2)) || { echo "mutate.sh: $1 needs a value (see --help)" >&2; exit 2; } ;;
    esac
    case $1 in
    --list) LIST=$2; shift ;;
    --suites) SUITES=$2; shift ;;
    --e2e) E2E=$2; shift ;;
    --user) RUN_USER=$2; shift ;;
    --rev) REV=$2; shift ;;
    --check) CHECK=1 ;;
    --keep) KEEP=1 ;;
    -j) JOBS=$2; shift ;;
    --timeout-mult) TMULT=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "mutate.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) ONLY+=("$1") ;;
    esac
    shift
done

[[ -f $LIST ]] || { echo "mutate.sh: no mutation list '$LIST'" >&2; exit 2; }
for t in meson ninja perl python3 git; do
    command -v "$t" >/dev/null || { echo "mutate.sh: needs $t" >&2; exit 2; }
done

SCRATCH=$(mktemp -d /tmp/shouter-mutate.XXXXXX)
chmod 755 "$SCRATCH"	# --user reads the build from here
SRC=$SCRATCH/src
BUILD=$SCRATCH/build
WORKTREE=0

cleanup() {
    if ((KEEP)); then
        echo "mutate.sh: scratch kept in $SCRATCH" >&2
        return
    fi
    if ((WORKTREE)); then
        git -C "$ROOT" worktree remove --force "$SRC" >/dev/null 2>&1
    fi
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The helper: "list FILE" prints one record per mutation (fields separated by tabs: name,
# file, func, what, from, to); "apply TREE FILE FUNC FROM TO" makes the substitution, exit 0,
# or 3 (no such function), 4 (text not found), 5 (text found more than once), 6 (no file).
cat >"$SCRATCH/mut.pl" <<'PERL'
use strict;
use warnings;

sub list {
    my ($path) = @_;
    open(my $f, '<', $path) or die "mutate.sh: cannot read $path\n";
    my (@blocks, $cur, $last);
    my $n = 0;
    while (my $line = <$f>) {
        $n++;
        chomp $line;
        next if $line =~ /^#/;
        if ($line =~ /^\s*$/) { $cur = undef; next; }
        if ($line =~ /^\s+(\S.*)$/) {
            die "$path:$n: continuation line without a field\n" unless $cur && $last;
            $cur->{$last} .= ($cur->{$last} eq '' ? '' : ' ') . $1;
            next;
        }
        $line =~ /^(name|file|func|what|from|to):\s*(.*?)\s*$/
            or die "$path:$n: expected 'field: value' (name, file, func, what, from, to)\n";
        unless ($cur) { $cur = { line => $n }; push @blocks, $cur; }
        die "$path:$n: '$1' given twice\n" if exists $cur->{$1};
        $cur->{$1} = $2;
        $last = $1;
    }
    my %seen;
    for my $b (@blocks) {
        for my $k (qw(name file func what from to)) {
            die "$path:$b->{line}: mutation without '$k:'\n" unless defined $b->{$k};
        }
        die "$path:$b->{line}: bad name '$b->{name}'\n" unless $b->{name} =~ /^\w+$/;
        die "$path:$b->{line}: '$b->{name}' twice\n" if $seen{$b->{name}}++;
        die "$path:$b->{line}: empty 'from:'\n" if $b->{from} eq '';
        print join("\t", map { s/\t/ /gr } @$b{qw(name file func what from to)}), "\n";
    }
}

sub apply {
    my ($tree, $file, $func, $from, $to) = @_;
    my $path = "$tree/$file";
    open(my $f, '<', $path) or exit 6;
    local $/;
    my $src = <$f>;
    close $f;
    $src =~ /^\Q$func\E\(/mg or exit 3;
    my $start = $-[0];
    my $end = index($src, "\n}\n", $start);
    exit 3 if $end < 0;
    $end += 3;
    my $body = substr($src, $start, $end - $start);
    my $pat = join('\s+', map { quotemeta } split(/\s+/, $from));
    my $count = () = $body =~ /$pat/g;
    exit 4 if $count == 0;
    exit 5 if $count > 1;
    $body =~ s/$pat/$to/;
    substr($src, $start, $end - $start) = $body;
    open($f, '>', $path) or exit 3;
    print $f $src;
    close $f or exit 3;
    exit 0;
}

my $mode = shift @ARGV;
if ($mode eq 'list') { list(@ARGV); exit 0; }
if ($mode eq 'apply') { apply(@ARGV); }
die "mut.pl: list|apply\n";
PERL

RECORDS=$(perl "$SCRATCH/mut.pl" list "$LIST") || exit 2
NAMES=() FILES=() FUNCS=() WHATS=() FROMS=() TOS=()
while IFS=$'\t' read -r name file func what from to; do
    if ((${#ONLY[@]})); then
        keep=0
        for o in "${ONLY[@]}"; do [[ $o == "$name" ]] && keep=1; done
        ((keep)) || continue
    fi
    NAMES+=("$name") FILES+=("$file") FUNCS+=("$func") WHATS+=("$what")
    FROMS+=("$from") TOS+=("$to")
done <<<"$RECORDS"
if ((${#ONLY[@]})); then
    for o in "${ONLY[@]}"; do
        [[ " ${NAMES[*]} " == *" $o "* ]] ||
            { echo "mutate.sh: no mutation '$o' in $LIST" >&2; exit 2; }
    done
fi
((${#NAMES[@]})) || { echo "mutate.sh: no mutations in $LIST" >&2; exit 2; }

# The scratch tree.
if [[ -n $REV ]]; then
    git -C "$ROOT" worktree add --detach "$SRC" "$REV" >/dev/null ||
        { echo "mutate.sh: git worktree add $REV failed" >&2; exit 2; }
    WORKTREE=1
else
    mkdir -p "$SRC"
    (cd "$ROOT" && git ls-files -z -co --exclude-standard |
        while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done) \
        >"$SCRATCH/files"
    [[ -s $SCRATCH/files ]] || { echo "mutate.sh: no files listed in $ROOT" >&2; exit 2; }
    (cd "$ROOT" && tar --null -T "$SCRATCH/files" -cf -) | tar -C "$SRC" -xf - ||
        { echo "mutate.sh: cannot copy the tree" >&2; exit 2; }
    # the copy is a git checkout of the same files (in its index, nothing committed): the
    # tests list the tree through git too (mutations_apply: this script's --check, run there)
    { git -C "$SRC" -c init.defaultBranch=scratch init -q &&
        git -C "$SRC" update-index --add -z --stdin <"$SCRATCH/files"; } ||
        { echo "mutate.sh: cannot make the copy a git checkout" >&2; exit 2; }
fi
echo "mutate.sh: scratch tree $SRC ($([[ -n $REV ]] && echo "commit $REV" ||
    echo "copy of the working tree"))"

# The unit test that checks the list itself (this script's --check): with a mutation applied,
# that mutation's text is no longer there, so it fails whatever the code does; it never
# counts as catching one.
LIST_TEST=unit/mutations_apply

declare -A STATUS BY
apply_one() {
    local i=$1 rc=0 why
    perl "$SCRATCH/mut.pl" apply "$SRC" "${FILES[i]}" "${FUNCS[i]}" "${FROMS[i]}" \
        "${TOS[i]}" || rc=$?
    case $rc in
    0) return 0 ;;
    3) why="no function ${FUNCS[i]}() in ${FILES[i]}" ;;
    4) why="text not found in ${FUNCS[i]}()" ;;
    5) why="text found more than once in ${FUNCS[i]}()" ;;
    6) why="no file ${FILES[i]}" ;;
    *) why="helper failed ($rc)" ;;
    esac
    STATUS[${NAMES[i]}]="NOT APPLIED"
    BY[${NAMES[i]}]=$why
    return 1
}

print_table() {
    local i w=8 fw=8 name
    for name in "${NAMES[@]}"; do ((${#name} > w)) && w=${#name}; done
    for ((i = 0; i < ${#NAMES[@]}; i++)); do
        name="${FILES[i]}:${FUNCS[i]}"
        ((${#name} > fw)) && fw=${#name}
    done
    printf '\n%-*s | %-*s | %-12s | %s\n' "$w" mutation "$fw" "where" result "caught by"
    printf '%s\n' "$(printf '%*s' $((w + fw + 40)) '' | tr ' ' -)"
    for ((i = 0; i < ${#NAMES[@]}; i++)); do
        printf '%-*s | %-*s | %-12s | %s\n' "$w" "${NAMES[i]}" "$fw" \
            "${FILES[i]}:${FUNCS[i]}" "${STATUS[${NAMES[i]}]}" "${BY[${NAMES[i]}]}"
    done
    echo
}

exit_code() {
    local name code=0
    for name in "${NAMES[@]}"; do
        case ${STATUS[$name]} in
        caught | applies) ;;
        SURVIVED) ((code < 1)) && code=1 ;;
        *) code=2 ;;
        esac
    done
    return $code
}

if ((CHECK)); then
    for ((i = 0; i < ${#NAMES[@]}; i++)); do
        f=$SRC/${FILES[i]}
        if [[ -f $f ]]; then
            cp -p "$f" "$SCRATCH/orig"
            if apply_one "$i"; then
                STATUS[${NAMES[i]}]="applies"
                BY[${NAMES[i]}]="(--check: not built, not tested)"
                echo "--- ${NAMES[i]}: ${WHATS[i]}"
                diff -U1 "$SCRATCH/orig" "$f" | tail -n +3
            fi
            cp -p "$SCRATCH/orig" "$f"
        else
            apply_one "$i"
        fi
    done
    print_table
    exit_code
    exit $?
fi

# Build once, unmutated.
E2E_ON=false
if [[ -n $E2E ]]; then
    if ((EUID == 0)); then
        E2E_ON=true
    else
        echo "mutate.sh: not root: the e2e tests ($E2E) are not run" >&2
        E2E=""
    fi
fi
echo "mutate.sh: meson setup (werror off, e2e $E2E_ON)"
meson setup "$BUILD" "$SRC" -Dwerror=false -De2e=$E2E_ON --buildtype=release \
    >"$SCRATCH/setup.log" 2>&1 || { tail -n 20 "$SCRATCH/setup.log" >&2; exit 2; }
echo "mutate.sh: building the unmutated tree"
nice ninja -C "$BUILD" >"$SCRATCH/build.log" 2>&1 ||
    { tail -n 30 "$SCRATCH/build.log" >&2; exit 2; }
RUN_AS=()
if ((EUID == 0)) && [[ $RUN_USER != root ]]; then
    command -v setpriv >/dev/null || { echo "mutate.sh: --user needs setpriv" >&2; exit 2; }
    id -u "$RUN_USER" >/dev/null 2>&1 || { echo "mutate.sh: no user '$RUN_USER'" >&2; exit 2; }
    # git refuses a checkout another user owns ("dubious ownership"): the scratch tree, ours,
    # is declared safe for the tests' git (mutations_apply) in their environment only
    GCN=${GIT_CONFIG_COUNT:-0}
    RUN_AS=(setpriv --reuid="$(id -u "$RUN_USER")" --regid="$(id -g "$RUN_USER")"
        --clear-groups env HOME=/tmp GIT_CONFIG_COUNT=$((GCN + 1))
        "GIT_CONFIG_KEY_$GCN=safe.directory" "GIT_CONFIG_VALUE_$GCN=$SRC")
    chown "$RUN_USER" "$BUILD/meson-logs"
    echo "mutate.sh: the suites run as user $RUN_USER (without root)"
fi

# run_tests LOGBASE: runs the suites (and the e2e tests); writes $SCRATCH/LOGBASE.ran (how
# many tests ran) and prints the tests that neither passed nor skipped, one per line, as
# suite/name (with " (timeout)" and the like when they did not just fail)
run_tests() {
    local base=$1 args=() s
    for s in $SUITES; do args+=(--suite "$s"); done
    rm -f "$BUILD/meson-logs/$base"-*.json
    if ((${#args[@]})); then
        "${RUN_AS[@]}" nice meson test -C "$BUILD" --no-rebuild --num-processes "$JOBS" \
            --timeout-multiplier "$TMULT" --logbase "$base-suites" "${args[@]}" \
            >"$SCRATCH/$base-suites.log" 2>&1
    fi
    if [[ -n $E2E ]]; then
        # shellcheck disable=SC2086
        nice meson test -C "$BUILD" --no-rebuild --num-processes 1 \
            --timeout-multiplier "$TMULT" --logbase "$base-e2e" $E2E \
            >"$SCRATCH/$base-e2e.log" 2>&1
    fi
    python3 - "$BUILD/meson-logs" "$base" "$SCRATCH/$base.ran" <<'PY'
import glob, json, sys
d, base, ran = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
for path in sorted(glob.glob(f"{d}/{base}-*.json")):
    for line in open(path):
        t = json.loads(line)
        n += 1
        if t["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
            continue
        name = t["name"].split(":", 1)[-1].replace(" / ", "/")
        res = "" if t["result"] == "FAIL" else " (" + t["result"].lower() + ")"
        print(name + res)
with open(ran, "w") as f:
    f.write(f"{n}\n")
PY
}

echo "mutate.sh: running the tests unmutated (suites: $SUITES${E2E:+; e2e: $E2E})"
BASE_FAIL=$(run_tests base)
BASE_RAN=$(cat "$SCRATCH/base.ran")
if ((BASE_RAN == 0)); then
    echo "mutate.sh: no test ran (see $SCRATCH/base-*.log):" >&2
    tail -n 5 "$SCRATCH"/base-*.log >&2
    KEEP=1
    exit 2
fi
echo "mutate.sh: $BASE_RAN tests ran unmutated"
if [[ -n $BASE_FAIL ]]; then
    echo "mutate.sh: these tests fail without any mutation; they count for nothing below:" >&2
    while IFS= read -r t; do echo "    $t"; done <<<"$BASE_FAIL" >&2
fi

for ((i = 0; i < ${#NAMES[@]}; i++)); do
    name=${NAMES[i]}
    f=$SRC/${FILES[i]}
    echo "mutate.sh: [$((i + 1))/${#NAMES[@]}] $name: ${WHATS[i]}"
    if [[ ! -f $f ]]; then
        apply_one "$i"
        continue
    fi
    cp -p "$f" "$SCRATCH/orig"
    if apply_one "$i"; then
        if ! nice ninja -C "$BUILD" >"$SCRATCH/$name-build.log" 2>&1; then
            STATUS[$name]="BUILD FAILED"
            BY[$name]="see $(grep -m1 'error' "$SCRATCH/$name-build.log")"
        else
            failed=$(run_tests "mut-$name" | grep -vxF -f <(printf '%s\n' "$BASE_FAIL") |
                grep -vE "^$LIST_TEST( |\$)" || true)
            ran=$(cat "$SCRATCH/mut-$name.ran")
            if ((ran != BASE_RAN)); then
                STATUS[$name]="TEST ERROR"
                BY[$name]="$ran tests ran, $BASE_RAN unmutated (see $SCRATCH/mut-$name-*.log)"
                KEEP=1
            elif [[ -n $failed ]]; then
                STATUS[$name]="caught"
                BY[$name]=$(paste -sd, <<<"$failed" | sed 's/,/, /g')
            else
                STATUS[$name]="SURVIVED"
                BY[$name]="-"
            fi
        fi
    fi
    cp -p "$SCRATCH/orig" "$f"
    touch "$f"	# rebuilt with the next mutation
    echo "    -> ${STATUS[$name]}${BY[$name]:+: ${BY[$name]}}"
done

print_table
exit_code
