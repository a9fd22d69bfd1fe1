#!/usr/bin/env bash
# Installs dgad into PREFIX, laid out like a Derivgrind installation, so
# scripts written for Derivgrind work once they point at PREFIX:
#
#   bin/dgad, bin/dg-eval            dgad's own commands
#   bin/valgrind, bin/derivgrind     -> dgad: `valgrind --tool=derivgrind [--record=DIR] PROG`
#   bin/vgdb                         -> dgad: the relay gdb runs for `target remote | vgdb --pid=PID`
#   bin/tape-evaluation              -> dg-eval: `tape-evaluation DIR [--stats|--forward]`
#   lib/libdgad.so                   the runtime (dgad finds it in ../lib)
#   lib/dgad-static-host             the host of statically linked programs
#   include/valgrind/derivgrind.h, derivgrind-recording.h, derivgrind_clientrequests.mod
#   include/dgad.h, include/dgad/request.h, include/dgad.mod
#   lib/valgrind/libderivgrind_clientrequests-amd64.a (and -amd64_linux.a, libdgadclient.a)
#   lib/python3/site-packages/derivgrind, dgad   the Python modules
#
# Usage: scripts/install.sh PREFIX [--no-build] [--from DIR]
#   --no-build   install the built files as they are (no cargo build)
#   --from DIR   where dgad, dg-eval and libdgad.so are (default
#                target/release; implies --no-build)
# FC and CC choose the compilers of the Fortran module (the .mod file is
# specific to the gfortran version that reads it) and the Python extension.
set -euo pipefail

usage() { echo "usage: $0 PREFIX [--no-build] [--from DIR]" >&2; exit 2; }
(($# >= 1)) || usage
prefix=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
release=$root/target/release
build=1
while (($#)); do
    case $1 in
        --no-build) build=0 ;;
        --from) (($# >= 2)) || usage; release=$2; build=0; shift ;;
        *) usage ;;
    esac
    shift
done

if ((build)); then
    cargo build --release -q --manifest-path "$root/Cargo.toml" \
        -p preload -p evaluator -p launcher
fi
for f in dgad dg-eval libdgad.so dgad-static-host; do
    [[ -f $release/$f ]] || { echo "install.sh: $release/$f is missing (cargo build --release)" >&2; exit 1; }
done

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

mkdir -p "$prefix/bin" "$prefix/lib/valgrind" "$prefix/include/valgrind" "$prefix/include/dgad" \
    "$prefix/lib/python3/site-packages"

# Binaries, replaced whole (a running copy keeps its old file).
put() { install -m "$1" "$2" "$3.new.$$" && mv -f "$3.new.$$" "$3"; }
put 755 "$release/dgad" "$prefix/bin/dgad"
put 755 "$release/dg-eval" "$prefix/bin/dg-eval"
put 755 "$release/libdgad.so" "$prefix/lib/libdgad.so"
# The host statically linked programs run in, found beside libdgad.so.
put 755 "$release/dgad-static-host" "$prefix/lib/dgad-static-host"
for name in valgrind derivgrind vgdb; do ln -sfn dgad "$prefix/bin/$name"; done
ln -sfn dg-eval "$prefix/bin/tape-evaluation"

# Headers.
put 644 "$root/include/dgad.h" "$prefix/include/dgad.h"
put 644 "$root/include/dgad/request.h" "$prefix/include/dgad/request.h"
for h in derivgrind.h derivgrind-recording.h; do
    put 644 "$root/include/valgrind/$h" "$prefix/include/valgrind/$h"
done

# The Fortran modules and the client library, built with the user's gfortran.
if command -v "${FC:-gfortran}" >/dev/null 2>&1; then
    make -s -C "$root/preload/client" BUILD="$scratch/client" >/dev/null
    put 644 "$scratch/client/derivgrind_clientrequests.mod" \
        "$prefix/include/valgrind/derivgrind_clientrequests.mod"
    put 644 "$scratch/client/dgad.mod" "$prefix/include/dgad.mod"
    for lib in libderivgrind_clientrequests-amd64.a libderivgrind_clientrequests-amd64_linux.a \
               libdgadclient.a; do
        put 644 "$scratch/client/libdgadclient.a" "$prefix/lib/valgrind/$lib"
    done
else
    echo "install.sh: no gfortran (FC): the Fortran module and client library are not installed" >&2
fi

# Python: both packages, with the client extension built in place.
site=$prefix/lib/python3/site-packages
rm -rf "$site/dgad.new.$$" "$site/derivgrind.new.$$"
cp -r "$root/python/dgad" "$site/dgad.new.$$"
cp -r "$root/python/derivgrind" "$site/derivgrind.new.$$"
find "$site/dgad.new.$$" "$site/derivgrind.new.$$" -name '__pycache__' -prune -exec rm -rf {} +
rm -f "$site/dgad.new.$$"/_client*.so
"${CC:-cc}" -O2 -Wall -Wextra -shared -fPIC -o "$site/dgad.new.$$/_client.so" \
    "$site/dgad.new.$$/_client.c"
for pkg in dgad derivgrind; do
    rm -rf "$site/$pkg"
    mv "$site/$pkg.new.$$" "$site/$pkg"
done

echo "dgad installed into $prefix ($("$prefix/bin/dgad" --version))"
