"""dgad for Python: differentiate python3 scripts run under libdgad.so.

Mark the inputs and outputs of a computation, run the unmodified
``python3`` under the preload in record mode, and evaluate the tape::

    import dgad, math
    x = dgad.input(3.0)            # a fresh float, marked as an AD input
    y = x * math.sin(x)
    dgad.output(y)                 # marks y as an AD output

    $ run=$(mktemp -d)
    $ DGAD_RECORD=$run LD_PRELOAD=<dgad>/target/release/libdgad.so python3 script.py
    $ echo 1.0 > $run/dg-output-bars && <dgad>/target/release/dg-eval $run
    $ cat $run/dg-input-bars   # dy/dx

Without the preload every request is a no-op: ``input`` returns the value,
``output`` returns 0, the script computes as usual. ``grad(f, x)`` does the
whole round trip (child process, record, reverse sweep) from Python.

How it works: a Python float is a PyFloatObject whose ``ob_fval`` field
holds the double. ``input`` makes a new float object and issues Derivgrind's
client requests on the address of its ``ob_fval``, which gives that memory a
tape index; CPython's arithmetic, ``math`` and numpy then load the value from
there, and dgad follows it through the machine code. The same holds for the
elements of numpy arrays (``input_array``), marked in place.

See python/README.md for the full reference.
"""

import contextlib as _contextlib
import ctypes as _ctypes
import sys as _sys

from . import _native
from ._native import FLOAT_VALUE_OFFSET as _FLOAT_OFFSET, SCALAR_VALUE_OFFSET as _SCALAR_OFFSET

__all__ = [
    "input", "output", "input_array", "output_array", "index", "passive",
    "passive_array", "mode", "running", "disable", "enable", "disabled",
    "set_dot", "get_dot", "grad", "value_and_grad", "jacobian", "jvp", "DgadError",
    "find_lib", "find_eval", "client_library",
]

__version__ = "0.1.0"

_lib = _native.LIB

#: Request answers of DGAD_REQ_GET_MODE.
_MODES = {0: "native", ord("b"): "record", ord("d"): "dot"}

_SIZES = {4: "float32", 8: "float64", 16: "longdouble"}


_LAZY = ("grad", "value_and_grad", "jacobian", "jvp", "DgadError", "find_lib", "find_eval")


def __getattr__(name):
    # dgad.grad and its helpers live in dgad._grad, imported on first use:
    # a script that only marks values should not pay for subprocess,
    # tempfile and pickle (imports are slow under the recording).
    if name in _LAZY:
        from . import _grad
        return getattr(_grad, name)
    raise AttributeError("module 'dgad' has no attribute %r" % name)


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


def client_library():
    """Path of the loaded client-request library, or None (requests are
    then no-ops, which is right natively)."""
    return _native.LIB_PATH if _lib is not None else None


def mode():
    """``"record"`` under libdgad.so in record mode, ``"dot"`` in forward
    mode (Derivgrind), ``"native"`` otherwise."""
    if _lib is None:
        return "native"
    answer = _lib.dgad_py_mode()
    return _MODES.get(answer, chr(answer) if 0 < answer < 256 else "native")


def running():
    """True under dgad (or Derivgrind), False natively."""
    return mode() != "native"


# ---------------------------------------------------------------------------
# Where a value lives
# ---------------------------------------------------------------------------

def _numpy():
    return _sys.modules.get("numpy")


def _scalar_location(x):
    """(address, size in bytes) of the value inside scalar object `x`:
    a float (or subclass, numpy.float64 included) or a numpy floating
    scalar. None for anything else."""
    if isinstance(x, float):
        return id(x) + _FLOAT_OFFSET, 8
    np = _numpy()
    if np is not None and isinstance(x, np.floating) and x.dtype.itemsize in _SIZES:
        address = id(x) + _SCALAR_OFFSET
        size = x.dtype.itemsize
        if _ctypes.string_at(address, size) != x.tobytes():
            raise TypeError("dgad: unexpected memory layout of %s scalars" % type(x).__name__)
        return address, size
    return None


def _fresh(x):
    """A new scalar object with the value of `x`: a Python float for
    Python numbers, a numpy scalar of the same type for numpy floating
    scalars. New, so that marking it touches no other object (CPython
    shares float constants). A float64 scalar stays one: numpy stores it
    into an array by its type (`a[i] = dgad.input(a[i])`), where a Python
    float goes through `PyFloat_AsDouble`'s error check `x == -1.0`, after
    which gcc's code stores the constant -1.0, without x's index."""
    np = _numpy()
    if np is not None and isinstance(x, np.floating):
        if x.dtype.itemsize not in _SIZES:
            raise TypeError("dgad: %s values cannot be marked (float32, float64 and "
                            "longdouble can)" % x.dtype)
        return np.array(x)[()]  # a copy: a new scalar object
    if isinstance(x, complex) or not hasattr(x, "__float__"):
        raise TypeError("dgad: a real number is needed, not %s" % type(x).__name__)
    # float() may return x itself; the product never does. `* 1.0` keeps
    # the value bit for bit (also -0.0, inf, nan).
    return float(x) * 1.0


def _location_or_error(x, what):
    location = _scalar_location(x)
    if location is None:
        raise TypeError("dgad.%s: a float or numpy floating scalar is needed, not %s%s"
                        % (what, type(x).__name__,
                           " (use %s_array for arrays)" % what
                           if what in ("input", "output") and hasattr(x, "__len__") else ""))
    return location


# ---------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------

def input(x):
    """Returns a new float with the value of `x`, marked as the next AD input
    (the value's index is appended to the input index file). Natively: a
    float equal to `x`. numpy float32/longdouble scalars give a scalar of the
    same type."""
    value = _fresh(x)
    if _lib is not None:
        address, size = _scalar_location(value)
        _lib.dgad_py_input(address, size)
    return value


def output(y):
    """Marks `y` as the next AD output (a tape block copying its index, whose
    index is appended to the output index file) and returns that index (0
    natively). A passive `y` (e.g. an int) is an output with derivative 0."""
    location = _scalar_location(y)
    if location is None:
        if hasattr(y, "__len__") or (hasattr(y, "shape") and getattr(y, "shape", ())):
            raise TypeError("dgad.output: one value is needed, not %s (use output_array)"
                            % type(y).__name__)
        y = _fresh(y)
        location = _scalar_location(y)
    if _lib is None:
        return 0
    return _lib.dgad_py_output(location[0], location[1])


def index(x):
    """The tape index of float `x` (0: passive, and 0 natively)."""
    if _lib is None:
        _location_or_error(x, "index")
        return 0
    address, _ = _location_or_error(x, "index")
    return _lib.dgad_py_get_index(address)


def passive(x):
    """A new float with the value of `x` and no derivative (index 0): the
    derivative stops here (like stop_gradient)."""
    value = _fresh(x)
    if _lib is not None:
        address, _ = _scalar_location(value)
        _lib.dgad_py_set_index(address, 0)
    return value


# ---------------------------------------------------------------------------
# Arrays
# ---------------------------------------------------------------------------

def _array_walk(a, function_name, writable):
    """Calls the client library's strided walk on every element of `a`,
    which is a numpy array (or anything with __array_interface__) or an
    array.array; elements in C order of the logical array."""
    interface = getattr(a, "__array_interface__", None)
    if interface is not None:
        typestr = interface["typestr"]
        size = int(typestr[2:])
        if typestr[1] != "f" or size not in _SIZES or typestr[0] == ">":
            raise TypeError("dgad.%s: a float32, float64 or longdouble array is needed, "
                            "not dtype %s" % (function_name, getattr(a, "dtype", typestr)))
        address, readonly = interface["data"]
        if writable and readonly:
            raise TypeError("dgad.%s: the array is read-only" % function_name)
        shape = tuple(interface["shape"])
        strides = interface.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], size
            for extent in reversed(shape):
                strides.insert(0, step)
                step *= extent
        count = 1
        for extent in shape:
            count *= extent
    elif type(a).__name__ == "array" and hasattr(a, "buffer_info"):
        if a.typecode not in ("d", "f"):
            raise TypeError("dgad.%s: array.array of type 'd' or 'f' is needed, not %r"
                            % (function_name, a.typecode))
        address, count = a.buffer_info()
        size = a.itemsize
        shape, strides = (count,), (size,)
    else:
        return False
    if count == 0 or _lib is None:
        return True
    ndim = len(shape)
    shape_c = (_ctypes.c_long * max(ndim, 1))(*shape)
    strides_c = (_ctypes.c_long * max(ndim, 1))(*strides)
    walker = {
        "input_array": _lib.dgad_py_input_strided,
        "output_array": _lib.dgad_py_output_strided,
        "passive_array": _lib.dgad_py_passive_strided,
    }[function_name]
    walker(address, ndim, shape_c, strides_c, size)
    return True


def input_array(a):
    """Marks every element of `a` as an AD input, in place and in C order
    (``a.flat`` order), and returns `a`. `a`: a writable numpy array of
    float64, float32 or longdouble, an array.array('d'/'f'), or a list
    (whose elements are replaced by marked floats, as by ``input``)."""
    if isinstance(a, list):
        for i, v in enumerate(a):
            a[i] = input(v)
        return a
    if not _array_walk(a, "input_array", True):
        raise TypeError("dgad.input_array: a numpy array, array.array or list is needed, "
                        "not %s" % type(a).__name__)
    return a


def output_array(b):
    """Marks every element of `b` as an AD output, in C order (``b.flat``
    order). `b`: a numpy array of float64/float32/longdouble, an
    array.array, or any iterable of numbers (each marked as by ``output``)."""
    if _array_walk(b, "output_array", False):
        return
    try:
        items = list(b)
    except TypeError:
        raise TypeError("dgad.output_array: an array or iterable is needed, not %s"
                        % type(b).__name__) from None
    for item in items:
        if _scalar_location(item) is None and hasattr(item, "__len__"):
            output_array(item)
        else:
            output(item)


def passive_array(a):
    """Removes the derivatives of the elements of `a` in place (index 0);
    returns `a`."""
    if isinstance(a, list):
        for i, v in enumerate(a):
            a[i] = passive(v)
        return a
    if not _array_walk(a, "passive_array", True):
        raise TypeError("dgad.passive_array: a numpy array, array.array or list is needed, "
                        "not %s" % type(a).__name__)
    return a


# ---------------------------------------------------------------------------
# Disabling
# ---------------------------------------------------------------------------

def disable():
    """Stops recording (nestable): new results are passive until ``enable``."""
    if _lib is not None:
        _lib.dgad_py_disable(1, 0)


def enable():
    """Undoes one ``disable``."""
    if _lib is not None:
        _lib.dgad_py_disable(0, 1)


@_contextlib.contextmanager
def disabled():
    """``with dgad.disabled(): ...`` runs the block without recording."""
    disable()
    try:
        yield
    finally:
        enable()


# ---------------------------------------------------------------------------
# Dot values (forward mode)
# ---------------------------------------------------------------------------

_warned_dot = False


def _warn_no_dot_mode(what):
    global _warned_dot
    if _warned_dot:
        return
    _warned_dot = True
    _sys.stderr.write(
        "dgad: python: %s: dgad has no forward (dot) mode yet, only record mode; "
        "dot values are ignored and read as 0.0. Mark inputs and outputs with "
        "input/output (derivgrind: inputf/outputf) and get forward derivatives "
        "from the tape with `dg-eval --forward`.\n" % what)
    _sys.stderr.flush()


def _dot_buffer(size, value):
    if size == 4:
        return _ctypes.c_float(value)
    if size == 8:
        return _ctypes.c_double(value)
    return _ctypes.c_longdouble(value)


def set_dot(x, dot):
    """Forward (dot) mode: returns a new float with the value of `x` and dot
    value (tangent) `dot`. dgad has no dot mode yet: under dgad in record
    mode this warns once on stderr and returns the plain value; natively it
    returns the value."""
    value = _fresh(x)
    if _lib is None:
        return value
    address, size = _scalar_location(value)
    buffer = _dot_buffer(size, float(dot))
    answered = _lib.dgad_py_set_dotvalue(address, _ctypes.addressof(buffer), size)
    if not answered and mode() == "record":
        _warn_no_dot_mode("set_dotvalue")
    return value


def get_dot(x):
    """Forward (dot) mode: the dot value of `x`; 0.0 natively and in record
    mode (which warns once, see ``set_dot``)."""
    address, size = _location_or_error(x, "get_dot")
    if _lib is None:
        return 0.0
    buffer = _dot_buffer(size, 0.0)
    answered = _lib.dgad_py_get_dotvalue(address, _ctypes.addressof(buffer), size)
    if not answered and mode() == "record":
        _warn_no_dot_mode("get_dotvalue")
    return float(buffer.value)
