#!/usr/bin/env bash
# Self-test of dgad's client API (include/dgad.h, include/valgrind/*.h and the
# Fortran modules in this directory).  Exits non-zero on any failure.
#
#   preload/client/selftest.sh [-v]
#
# For gcc/clang (C, several -std), g++/clang++ (C++) and gfortran, each at
# -O0, -O3 and -O3 -march=native, with -Wall -Wextra -Werror:
#   1. compile the test programs in tests/ and run them natively: every
#      request must be a no-op that returns its default;
#   2. run them under tests/fakegrind, a ptrace-based stand-in for the
#      runtime that answers the requests (mode 'b' and 'd'): the answers must
#      reach the program, and the index files and tape must equal
#      tests/expected/*;
#   3. check the headers alone, NVALGRIND, and the disassembly of DG_INPUTF
#      (the exact 5-instruction sequence, %rax loaded with the block address).
# A compiler that is not installed is skipped with a notice, unless
# DGAD_SELFTEST_REQUIRE_ALL=1, when that is a failure.  Likewise if ptrace is
# not permitted (step 2).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
INC=$ROOT/include
TESTS=$HERE/tests
VERBOSE=0
[ "${1:-}" = "-v" ] && VERBOSE=1
REQUIRE_ALL=${DGAD_SELFTEST_REQUIRE_ALL:-0}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/dgad-client-selftest.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

npass=0
nfail=0
nskip=0
pass() { npass=$((npass + 1)); [ "$VERBOSE" = 1 ] && echo "ok   $*"; return 0; }
fail() { nfail=$((nfail + 1)); echo "FAIL $*"; }
skip() {
    if [ "$REQUIRE_ALL" = 1 ]; then fail "$* (required)"; else nskip=$((nskip + 1)); echo "skip $*"; fi
}

# run DESC CMD...: run CMD, record pass/fail, show its output on failure.
run() {
    local desc=$1
    shift
    if "$@" >"$WORK/log" 2>&1; then
        pass "$desc"
        return 0
    fi
    fail "$desc"
    sed 's/^/     | /' "$WORK/log" | head -40
    return 1
}

have() { command -v "$1" >/dev/null 2>&1; }

OPTS=("-O0" "-O3" "-O3 -march=native")
WARN="-Wall -Wextra -Werror -DDGAD_HEADER_WARNINGS"

# ---------------------------------------------------------------- fakegrind
FAKE=$WORK/fakegrind
FAKE_OK=0
if have gcc || have cc; then
    FCC=$(command -v gcc || command -v cc)
    if run "build tests/fakegrind" "$FCC" -O2 -Wall -Wextra -o "$FAKE" "$TESTS/fakegrind.c"; then
        if "$FAKE" -o "$WORK" -- /bin/true >"$WORK/log" 2>&1; then
            FAKE_OK=1
        else
            skip "fakegrind runs (ptrace not permitted?): $(head -1 "$WORK/log")"
        fi
    fi
else
    skip "no C compiler for tests/fakegrind"
fi

# under_fake NAME EXE: run EXE under fakegrind in modes b and d; compare the
# files of mode b with tests/expected/NAME.*
under_fake() {
    local name=$1 exe=$2 desc=$3 out f
    [ "$FAKE_OK" = 1 ] || return 0
    out=$WORK/fake.$name
    rm -rf "$out"
    mkdir -p "$out"
    run "$desc: fakegrind -m b" "$FAKE" -m b -o "$out" -- "$exe" || return 1
    for f in dg-input-indices dg-output-indices tape.txt; do
        run "$desc: $f as expected" diff -u "$TESTS/expected/$name.$f" "$out/$f"
    done
    run "$desc: fakegrind -m d" "$FAKE" -m d -o "$out" -- "$exe"
}

# c_case COMPILER LANGFLAGS OPT SRC NAME: compile, run natively, run under fake.
c_case() {
    local cc=$1 lang=$2 opt=$3 src=$4 name=$5 exe desc
    exe=$WORK/$name.$(echo "$cc $lang $opt" | tr -c 'A-Za-z0-9\n' _)
    desc="$cc $lang $opt $name"
    # shellcheck disable=SC2086
    run "$desc: compile" "$cc" $lang $opt $WARN -I"$INC" "$TESTS/$src" -o "$exe" || return
    run "$desc: native" "$exe"
    under_fake "$name" "$exe" "$desc"
}

# ---------------------------------------------------------------- C
for cc in gcc clang; do
    if ! have $cc; then skip "$cc not installed"; continue; fi
    for lang in "-std=c11 -pedantic" "-std=gnu99" "-std=gnu17"; do
        for opt in "${OPTS[@]}"; do
            c_case $cc "$lang" "$opt" test_derivgrind.c derivgrind
            c_case $cc "$lang" "$opt" test_dgad.c dgad
        done
    done
done

# ---------------------------------------------------------------- C++
for cxx in g++ clang++; do
    if ! have $cxx; then skip "$cxx not installed"; continue; fi
    for lang in "-x c++ -std=c++11 -pedantic" "-x c++ -std=c++17"; do
        for opt in "${OPTS[@]}"; do
            c_case $cxx "$lang" "$opt" test_derivgrind.c derivgrind
            c_case $cxx "$lang" "$opt" test_dgad.c dgad
        done
    done
done

# ---------------------------------------------------------------- headers
# Each header alone, in C and C++; and both together.
for cc in gcc clang g++ clang++; do
    have $cc || continue
    case $cc in *++) lang="-x c++";; *) lang="-x c";; esac
    for hdr in dgad.h valgrind/derivgrind.h valgrind/derivgrind-recording.h; do
        printf '#include <%s>\nint main(void) { return 0; }\n' "$hdr" >"$WORK/h.c"
        # shellcheck disable=SC2086
        run "$cc: <$hdr> alone" $cc $lang $WARN -I"$INC" -c "$WORK/h.c" -o "$WORK/h.o"
    done
    printf '#include <valgrind/derivgrind.h>\n#include <dgad.h>\n#include <valgrind/derivgrind-recording.h>\nint main(void) { double x = 1; DG_INPUTF(x); dgad_output(&x); return (int)DG_GET_MODE; }\n' >"$WORK/h2.c"
    # shellcheck disable=SC2086
    # (without -DDGAD_HEADER_WARNINGS: the headers as users get them)
    run "$cc: derivgrind.h + dgad.h together" $cc $lang -Wall -Wextra -Werror -I"$INC" "$WORK/h2.c" -o "$WORK/h2" &&
        run "$cc: derivgrind.h + dgad.h together: native" "$WORK/h2"
done
# With Valgrind's own valgrind.h, when installed.
if have gcc && printf '#include <valgrind/valgrind.h>\n' | gcc -E -x c - >/dev/null 2>&1; then
    for pre in '#include <valgrind/valgrind.h>\n#include <valgrind/derivgrind.h>' \
               '#include <valgrind/derivgrind.h>\n#include <valgrind/valgrind.h>' \
               '#define DGAD_INCLUDE_VALGRIND_H\n#include <valgrind/derivgrind.h>'; do
        printf "$pre"'\nint main(void) { return (int)RUNNING_ON_VALGRIND + (int)DG_GET_MODE; }\n' >"$WORK/h3.c"
        run "gcc: with Valgrind's valgrind.h: $(echo "$pre" | sed 's/\\n/; /')" gcc $WARN -I"$INC" "$WORK/h3.c" -o "$WORK/h3" &&
            run "gcc: with Valgrind's valgrind.h: native" "$WORK/h3"
    done
fi

# NVALGRIND / DGAD_NO_CLIENT_REQUESTS: no request sequence left, still correct natively.
if have gcc; then
    for def in -DNVALGRIND -DDGAD_NO_CLIENT_REQUESTS; do
        if run "gcc $def: compile" gcc -O2 $WARN $def -I"$INC" "$TESTS/test_derivgrind.c" -o "$WORK/nv"; then
            run "gcc $def: native" "$WORK/nv"
            if objdump -d "$WORK/nv" | grep -q 'xchg *%rbx,%rbx'; then
                fail "gcc $def: request sequence still present"
            else
                pass "gcc $def: no request sequence"
            fi
        fi
    done
fi

# ---------------------------------------------------------------- disassembly
# check_disasm OBJ DESC N: OBJ must contain exactly N request sequences (the
# exact bytes), each preceded by a write of %rax (to the block address: the
# fakegrind runs check that dynamically).
check_disasm() {
    local obj=$1 desc=$2 want=$3
    objdump -d "$obj" >"$WORK/dis" || { fail "$desc: objdump"; return; }
    awk -v want="$want" '
        BEGIN { n = 0; bad = 0 }
        /^ *[0-9a-f]+:\t/ {
            split($0, f, "\t"); b = f[2]; gsub(/ +$/, "", b); ins = f[3]
            bytes[NR] = b; text[NR] = ins; lines[++k] = NR
        }
        END {
            for (i = 1; i + 4 <= k; i++) {
                if (bytes[lines[i]] == "48 c1 c7 03" && bytes[lines[i+1]] == "48 c1 c7 0d" &&
                    bytes[lines[i+2]] == "48 c1 c7 3d" && bytes[lines[i+3]] == "48 c1 c7 33" &&
                    bytes[lines[i+4]] == "48 87 db") {
                    n++
                    found = 0
                    # %rax survives a request, so it may be set before an
                    # earlier one (GCC reuses one block for consecutive requests).
                    for (j = i - 1; j >= 1 && j >= i - 200; j--) {
                        t = text[lines[j]]
                        if (t ~ /,%rax *$/ || t ~ /,%rax *#/) { found = 1; break }
                    }
                    if (!found) bad++
                }
            }
            printf "%d sequences, %d without a preceding write of %%rax\n", n, bad
            exit (n == want && bad == 0) ? 0 : 1
        }' "$WORK/dis" >"$WORK/log" 2>&1
    if [ $? = 0 ]; then
        pass "$desc: $(cat "$WORK/log")"
    else
        fail "$desc: $(cat "$WORK/log") (want $want)"
    fi
    # MARK_INPUT, NEW_INDEX_NOACTIVITYANALYSIS and SET_INDEX appear as
    # immediates (INDEX_TO_FILE may be loaded from a constant together with
    # its argument).
    for code in 0x44470100 0x44470006 0x44470004; do
        if grep -q "\$$code" "$WORK/dis"; then
            pass "$desc: request code $code"
        else
            fail "$desc: request code $code not found"
        fi
    done
}
for cc in gcc clang; do
    have $cc || continue
    for opt in "${OPTS[@]}"; do
        # shellcheck disable=SC2086
        if run "$cc $opt: compile probe.c" $cc $opt $WARN -I"$INC" -c "$TESTS/probe.c" -o "$WORK/probe.o"; then
            # -O0 keeps the request helper out of line: one sequence in it.
            # Optimised, DG_INPUTF inlines four requests: dgad's one-request
            # mark, then Derivgrind's three for a tool that does not know it.
            if [ "$opt" = -O0 ]; then want=1; else want=4; fi
            check_disasm "$WORK/probe.o" "$cc $opt DG_INPUTF disassembly" $want
            if [ "$VERBOSE" = 1 ] && [ "$cc" = gcc ] && [ "$opt" = -O3 ]; then
                echo "     --- gcc -O3: DG_INPUTF(*x) ---"
                objdump -d "$WORK/probe.o" | sed -n '/<dgad_probe_inputf>:/,$p' | sed 's/^/     | /'
            fi
        fi
    done
done

# ---------------------------------------------------------------- Valgrind
# Valgrind's own decoder must see our sequence as a client request and read
# the request code from the block at %rax: Nulgrind handles no requests and,
# at -v -v, names the first one (GET_MODE = 0x44470008).
if have valgrind && have gcc; then
    if run "valgrind cross-check: compile" gcc -O2 $WARN -I"$INC" "$TESTS/test_derivgrind.c" -o "$WORK/vg"; then
        if valgrind --tool=none -v -v "$WORK/vg" >"$WORK/vglog" 2>&1 &&
            grep -q "unhandled client request: 0x44470008 (DG+0x8)" "$WORK/vglog" &&
            grep -q "test_derivgrind OK (mode 0)" "$WORK/vglog"; then
            pass "valgrind --tool=none decodes the requests (GET_MODE = 0x44470008)"
        else
            fail "valgrind --tool=none cross-check"
            grep -i "client request\|test_derivgrind\|error" "$WORK/vglog" | head -10 | sed 's/^/     | /'
        fi
    fi
else
    nskip=$((nskip + 1))
    [ "$VERBOSE" = 1 ] && echo "skip valgrind cross-check (valgrind not installed)"
fi

# ---------------------------------------------------------------- Fortran
if have gfortran; then
    fcc=$(command -v gcc || command -v cc || echo cc)
    for opt in "${OPTS[@]}" "-O2 (shim by clang)"; do
        case $opt in
            *clang*) have clang || continue; ccx=clang; o=-O2;;
            *) ccx=$fcc; o=$opt;;
        esac
        b=$WORK/fbuild$(echo "$opt" | tr -c 'A-Za-z0-9\n' _)
        if ! run "make libdgadclient.a ($opt)" make -s -C "$HERE" BUILD="$b" CC="$ccx" FC=gfortran \
            CFLAGS="$o -Werror" FFLAGS="$o -Werror"; then
            continue
        fi
        for t in test_dg:fdg test_dgad:fdgad; do
            src=${t%%:*}
            name=${t##*:}
            exe=$b/$src
            # shellcheck disable=SC2086
            run "gfortran $opt $src: compile" gfortran $o -Wall -Wextra -Wno-compare-reals -Werror \
                -I"$b" "$TESTS/$src.f90" -L"$b" -ldgadclient -o "$exe" || continue
            run "gfortran $opt $src: native" "$exe"
            under_fake "$name" "$exe" "gfortran $opt $src"
        done
        # Derivgrind's library name links as well.
        # shellcheck disable=SC2086
        run "gfortran $opt: -lderivgrind_clientrequests" gfortran $o -Wno-compare-reals -I"$b" \
            "$TESTS/test_dg.f90" -L"$b" -lderivgrind_clientrequests -o "$b/test_dg2"
    done
else
    skip "gfortran not installed"
fi

echo "selftest: $npass passed, $nfail failed, $nskip skipped"
[ "$nfail" = 0 ]
