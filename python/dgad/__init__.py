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

Forward mode (``DGAD_MODE=dot``) needs no tape: ``x = dgad.set_dot(x, 1.0)``
gives a value a dot value (tangent), ``dgad.get_dot(y)`` reads a result's;
``jvp(f, x, v)`` runs ``f`` so in a child process.

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


_mode = None


def mode():
    """``"record"`` under libdgad.so in record mode, ``"dot"`` in forward
    mode (``DGAD_MODE=dot``, or Derivgrind's forward mode), ``"native"``
    otherwise (also under libdgad.so in null mode). A process keeps its
    mode, so the answer is asked once."""
    global _mode
    if _mode is None:
        answer = _lib.dgad_py_mode() if _lib is not None else 0
        _mode = _MODES.get(answer, chr(answer) if 0 < answer < 256 else "native")
    return _mode


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
    """A new float with the value of `x` and no derivative (index 0; in
    forward mode dot value 0): the derivative stops here (like
    stop_gradient)."""
    value = _fresh(x)
    if _lib is not None:
        address, size = _scalar_location(value)
        if mode() == "dot":
            _set_dot_at(address, size, 0.0)
        else:
            _lib.dgad_py_set_index(address, 0)
    return value


# ---------------------------------------------------------------------------
# Arrays
# ---------------------------------------------------------------------------

class _Layout:
    """Where the elements of an array are: base address, shape and strides
    in bytes (C order of the logical array), element size, element count;
    `make` builds a new contiguous array of the same element type from a
    list of values (the buffer of dot values)."""

    def __init__(self, address, shape, strides, size, make):
        self.address, self.shape, self.strides, self.size = address, shape, strides, size
        self.make = make
        self.count = 1
        for extent in shape:
            self.count *= extent

    def walk(self, walker, *extra):
        """Calls the client library's strided walk on every element."""
        if self.count == 0 or _lib is None:
            return
        ndim = len(self.shape)
        shape = (_ctypes.c_long * max(ndim, 1))(*self.shape)
        strides = (_ctypes.c_long * max(ndim, 1))(*self.strides)
        walker(self.address, ndim, shape, strides, self.size, *extra)


def _array_layout(a, function_name, writable):
    """The layout of `a`, a numpy array (or anything with
    __array_interface__) or an array.array; None for anything else, numpy
    scalars included (their __array_interface__ describes a copy)."""
    np = _numpy()
    if np is not None and isinstance(a, np.generic):
        return None
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

        def make(values):
            import numpy as np
            return np.array(values, dtype=np.dtype(typestr[1:]))

        return _Layout(address, shape, tuple(strides), size, make)
    if type(a).__name__ == "array" and hasattr(a, "buffer_info"):
        if a.typecode not in ("d", "f"):
            raise TypeError("dgad.%s: array.array of type 'd' or 'f' is needed, not %r"
                            % (function_name, a.typecode))
        address, count = a.buffer_info()
        return _Layout(address, (count,), (a.itemsize,), a.itemsize,
                       lambda values: type(a)(a.typecode, values))
    return None


def _array_walk(a, function_name, writable):
    """Marks (input_array, output_array) or clears (passive_array) every
    element of `a` in C order; False when `a` is no array."""
    layout = _array_layout(a, function_name, writable)
    if layout is None:
        return False
    if _lib is not None:
        layout.walk({
            "input_array": _lib.dgad_py_input_strided,
            "output_array": _lib.dgad_py_output_strided,
            "passive_array": _lib.dgad_py_passive_strided,
        }[function_name])
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
    """Removes the derivatives of the elements of `a` in place (index 0; in
    forward mode dot value 0); returns `a`."""
    if isinstance(a, list):
        for i, v in enumerate(a):
            a[i] = passive(v)
        return a
    if mode() == "dot" and _array_layout(a, "passive_array", True) is not None:
        return set_dot(a, 0.0)
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


def _warn_outside_dot_mode(what):
    """One warning on stderr for the dot-value functions in record mode,
    where they do nothing (natively they are silent no-ops, as in
    Derivgrind's module)."""
    global _warned_dot
    if _warned_dot or mode() != "record":
        return
    _warned_dot = True
    _sys.stderr.write(
        "dgad: python: %s: dot values exist in forward mode only (DGAD_MODE=dot); in "
        "record mode they are ignored and read as 0.0. Record with input/output "
        "(derivgrind: inputf/outputf) and get forward derivatives from the tape with "
        "`dg-eval --forward`, or run with DGAD_MODE=dot.\n" % what)
    _sys.stderr.flush()


def _dot_cell(size, value):
    """A buffer holding one value of the element type of `size` bytes, and
    its address. float and double through ctypes; x87 long double through
    numpy (ctypes' c_longdouble converts through double)."""
    if size == 16:
        import numpy as np
        cell = np.array([value], dtype=np.longdouble)
        return cell, cell.ctypes.data
    cell = _ctypes.c_float(value) if size == 4 else _ctypes.c_double(value)
    return cell, _ctypes.addressof(cell)


def _set_dot_at(address, size, dot):
    _cell, cell_address = _dot_cell(size, dot)
    _lib.dgad_py_set_dotvalue(address, cell_address, size)


def _dot_list(dot, count, what):
    """`dot` as a list of `count` dot values: one number for all, or as many
    numbers as there are elements (any shape, C order)."""
    np = _numpy()
    if np is not None and isinstance(dot, np.ndarray):
        # Kept a numpy array: longdouble dot values keep all their digits.
        values = dot.ravel() if dot.ndim else [dot[()]] * count
    elif hasattr(dot, "__len__"):
        values = list(dot)
    else:
        values = [dot] * count
    if len(values) != count:
        raise ValueError("dgad.%s: %d dot values for %d elements" % (what, len(values), count))
    return values


def _buffer_address(buffer):
    if hasattr(buffer, "buffer_info"):
        return buffer.buffer_info()[0]
    return buffer.__array_interface__["data"][0]


def set_dot(x, dot):
    """Forward mode (``DGAD_MODE=dot``): gives values a dot value (tangent).

    - `x` a float or numpy floating scalar (float64, float32, longdouble):
      returns a **new** scalar of the same type with the value of `x` and
      dot value `dot` (a new object for the same reason as ``input``).
    - `x` a numpy array of float64/float32/longdouble (any shape, strides)
      or an array.array('d'/'f'): sets the dot values of its elements **in
      place** and returns `x`; `dot` is one number for every element, or as
      many numbers as `x` has elements, in C order (``x.flat`` order).
    - `x` a list: its elements are replaced by new floats with the dot
      values (as for a scalar), in place; returns `x`.

    Natively this returns the value (scalars: a new one) and does nothing
    else; in record mode it also warns once on stderr (dot values need
    forward mode)."""
    if isinstance(x, list):
        for i, (v, d) in enumerate(zip(x, _dot_list(dot, len(x), "set_dot"))):
            x[i] = set_dot(v, d)
        return x
    layout = _array_layout(x, "set_dot", False)
    if layout is not None:
        buffer = layout.make(_dot_list(dot, layout.count, "set_dot"))
        if _lib is not None and layout.count:
            _warn_outside_dot_mode("set_dotvalue")
            layout.walk(_lib.dgad_py_set_dot_strided, _buffer_address(buffer))
        return x
    value = _fresh(x)
    if _lib is not None:
        address, size = _scalar_location(value)
        _warn_outside_dot_mode("set_dotvalue")
        _set_dot_at(address, size, dot)
    return value


def get_dot(x):
    """Forward mode (``DGAD_MODE=dot``): the dot value (tangent) of `x`.

    - a float, numpy float64 or float32 scalar: a float; a numpy longdouble
      scalar: a numpy longdouble (all its digits);
    - an int or bool: 0.0 (a passive value);
    - a numpy array: a new array of the same shape and type holding the
      dot values of its elements; an array.array: a new array.array;
    - a list or tuple: a list of the dot values of its items.

    0.0 (zeros) natively and in record mode (which also warns once on
    stderr)."""
    if isinstance(x, (list, tuple)):
        return [get_dot(item) for item in x]
    layout = _array_layout(x, "get_dot", False)
    if layout is not None:
        buffer = layout.make([0.0] * layout.count)
        if _lib is not None and layout.count:
            _warn_outside_dot_mode("get_dotvalue")
            layout.walk(_lib.dgad_py_get_dot_strided, _buffer_address(buffer))
        np = _numpy()
        if np is not None and isinstance(buffer, np.ndarray):
            buffer = buffer.reshape(layout.shape)
        return buffer
    np = _numpy()
    if isinstance(x, int) or (np is not None and isinstance(x, np.integer)):
        return 0.0  # a passive value (bool included)
    address, size = _location_or_error(x, "get_dot")
    cell, cell_address = _dot_cell(size, 0.0)
    if _lib is not None:
        _warn_outside_dot_mode("get_dotvalue")
        _lib.dgad_py_get_dotvalue(address, cell_address, size)
    if size == 16:
        return cell[0]
    return float(cell.value)
