"""Derivgrind's Python module, served by dgad.

Scripts written for Derivgrind's ``derivgrind`` module (its
``derivgrind_clientrequests_python`` extension) run unchanged::

    import derivgrind as dg
    x = dg.inputf(3.0)        # a new float, marked as an AD input
    y = x * x
    dg.outputf(y)             # marks y as an AD output

under ``LD_PRELOAD=libdgad.so`` with ``DGAD_RECORD=DIR``, then
``dg-eval DIR``. Natively every call is a no-op (``inputf`` returns the
value, ``get_dotvalue`` returns 0.0).

Forward (dot) mode, under ``DGAD_MODE=dot``: ``set_dotvalue(x, d)``
returns ``x`` with dot value ``d``, ``get_dotvalue(x)`` returns the dot
value of ``x``, as in Derivgrind (both also take numpy arrays, see
``dgad.set_dot``). In record mode both warn once on stderr,
``set_dotvalue`` returns the plain value and ``get_dotvalue`` 0.0: record
with ``inputf``/``outputf`` and use ``dg-eval --forward`` there.
"""

import dgad as _dgad

__all__ = ["inputf", "outputf", "set_dotvalue", "get_dotvalue"]


def inputf(val):
    """Returns a new float with the value of `val`, marked as an AD input
    and written to the input index file (Derivgrind's DG_INPUTF)."""
    return _dgad.input(val)


def outputf(val):
    """Marks `val` as an AD output and writes its index to the output
    index file (Derivgrind's DG_OUTPUTF). Returns None."""
    _dgad.output(val)


def set_dotvalue(val, grad):
    """Returns a new float with the value of `val` and dot value `grad`
    (forward mode; ``dgad.set_dot``)."""
    return _dgad.set_dot(val, grad)


def get_dotvalue(val):
    """The dot value of `val` (forward mode; 0.0 natively and in record
    mode; ``dgad.get_dot``)."""
    return _dgad.get_dot(val)
