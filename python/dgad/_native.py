"""Loading the client-request library and finding values in memory.

The client requests are machine code (``_client.c``), reached through
ctypes. The library is found, in this order:

1. ``$DGAD_PY_CLIENT``: an explicit path to a built ``_client`` library;
2. ``_client*.so`` next to this file, built by ``pip install``
   (``setup.py``) or by ``make -C python``;
3. a build cache, ``$DGAD_PY_CACHE`` or ``$XDG_CACHE_HOME/dgad`` or
   ``~/.cache/dgad``: ``_client.c`` is compiled there with ``$CC`` (else
   ``cc`` or ``gcc``) the first time it is needed, once per source version.

If none works the requests cannot be issued. Natively that changes nothing
(every request is a no-op there anyway), so the package works without the
library; under dgad it would silently lose the marks, so importing dgad
then raises ``ImportError`` with the reason.
"""

import ctypes
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.join(_HERE, "_client.c")
_ABI_VERSION = 2

if sys.implementation.name != "cpython":
    raise ImportError(
        "dgad marks values through their addresses in memory and supports "
        "CPython only, not %s" % sys.implementation.name
    )
if os.uname().machine != "x86_64":
    raise ImportError("dgad supports x86-64 only, not %s" % os.uname().machine)

#: Offset of ``ob_fval`` in a PyFloatObject: the value is the object's last
#: field, so this holds for every CPython build (also free-threaded ones,
#: whose object header is larger).
FLOAT_VALUE_OFFSET = float.__basicsize__ - ctypes.sizeof(ctypes.c_double)

#: Offset of the value in a numpy scalar (PyObject_HEAD, then the value).
SCALAR_VALUE_OFFSET = object.__basicsize__


def _running_under_dgad():
    """True when libdgad.so is mapped into this process."""
    try:
        with open("/proc/self/maps") as maps:
            return any("libdgad" in line for line in maps)
    except OSError:
        return "libdgad" in os.environ.get("LD_PRELOAD", "")


def _native_env():
    """The environment for helper processes: without the preload."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DGAD_")}
    env.pop("LD_PRELOAD", None)
    return env


def cache_dir():
    """Where the client library is compiled when no built copy exists."""
    explicit = os.environ.get("DGAD_PY_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dgad")


def _compile_into_cache():
    """Compiles _client.c into the cache (atomically); returns the path."""
    import zlib

    with open(_SOURCE, "rb") as f:
        digest = "%08x%04x" % (zlib.crc32(f.read()), _ABI_VERSION)
    directory = cache_dir()
    target = os.path.join(directory, "_client-%s.so" % digest)
    if os.path.isfile(target):
        return target
    # Imported only to compile (once per machine and source version):
    # imports are slow under dgad's record mode.
    import shutil
    import subprocess
    import tempfile

    compilers = [os.environ["CC"]] if os.environ.get("CC") else ["cc", "gcc"]
    compiler = next((c for c in compilers if shutil.which(c.split()[0])), None)
    if compiler is None:
        raise OSError("no C compiler found (tried %s); set CC, or build the "
                      "library with `pip install <dgad>/python`" % ", ".join(compilers))
    os.makedirs(directory, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix="_client-", suffix=".so.partial", dir=directory)
    os.close(fd)
    command = compiler.split() + ["-O2", "-shared", "-fPIC", "-o", partial, _SOURCE]
    try:
        # Natively, even when this process runs under dgad: the compiler's
        # work is not part of the computation.
        result = subprocess.run(command, env=_native_env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if result.returncode != 0:
            raise OSError("`%s` failed:\n%s" % (" ".join(command),
                                                result.stdout.decode(errors="replace")))
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def _candidates():
    explicit = os.environ.get("DGAD_PY_CLIENT")
    if explicit:
        yield explicit
        return
    for name in sorted(os.listdir(_HERE)):
        if name.startswith("_client") and name.endswith(".so"):
            yield os.path.join(_HERE, name)
    yield None  # the build cache


def _declare(lib):
    c = ctypes
    u64, vp = c.c_ulonglong, c.c_void_p
    longp = c.POINTER(c.c_long)
    signatures = {
        "dgad_py_mode": (c.c_int, []),
        "dgad_py_disable": (c.c_long, [c.c_long, c.c_long]),
        "dgad_py_get_index": (u64, [vp]),
        "dgad_py_set_index": (None, [vp, u64]),
        "dgad_py_new_index": (u64, [u64, u64, c.c_double, c.c_double, c.c_double, c.c_int]),
        "dgad_py_input": (u64, [vp, c.c_int]),
        "dgad_py_output": (u64, [vp, c.c_int]),
        "dgad_py_index_to_file": (None, [c.c_int, u64]),
        "dgad_py_input_strided": (None, [vp, c.c_int, longp, longp, c.c_int]),
        "dgad_py_output_strided": (None, [vp, c.c_int, longp, longp, c.c_int]),
        "dgad_py_passive_strided": (None, [vp, c.c_int, longp, longp, c.c_int]),
        "dgad_py_set_dotvalue": (c.c_ulong, [vp, vp, c.c_ulong]),
        "dgad_py_get_dotvalue": (c.c_ulong, [vp, vp, c.c_ulong]),
        "dgad_py_set_dot_strided": (None, [vp, c.c_int, longp, longp, c.c_int, vp]),
        "dgad_py_get_dot_strided": (None, [vp, c.c_int, longp, longp, c.c_int, vp]),
        "dgad_py_abi_version": (c.c_int, []),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    if lib.dgad_py_abi_version() != _ABI_VERSION:
        raise OSError("interface version %d, expected %d (rebuild it)"
                      % (lib.dgad_py_abi_version(), _ABI_VERSION))
    return lib


def load():
    """Returns (library or None, path or reason)."""
    problems = []
    for candidate in _candidates():
        try:
            path = candidate if candidate is not None else _compile_into_cache()
            return _declare(ctypes.CDLL(path)), path
        except (OSError, AttributeError) as e:
            where = candidate or "the build cache %s" % cache_dir()
            problems.append("%s: %s" % (where, e))
    return None, "; ".join(problems)


LIB, LIB_PATH = load()
UNDER_DGAD = _running_under_dgad()

if LIB is None and UNDER_DGAD:
    raise ImportError(
        "dgad: the client-request library could not be loaded, and this process "
        "runs under libdgad.so, where inputs and outputs would silently go "
        "unmarked. Build it with `pip install <dgad>/python` or `make -C "
        "<dgad>/python`, or let dgad compile it (needs cc). Tried: " + LIB_PATH
    )


def _probe_float_layout():
    probe = 1.2345678901234567 * 1.0
    seen = ctypes.c_double.from_address(id(probe) + FLOAT_VALUE_OFFSET).value
    if seen != probe:
        raise ImportError("dgad: unexpected PyFloatObject layout in this CPython build")


_probe_float_layout()
