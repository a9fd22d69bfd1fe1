"""Sending a function to the child process of ``dgad.grad``.

``pickle`` sends functions by reference (module and name), which fails for
lambdas, nested functions and everything defined in a script's
``__main__``. This pickler sends those by value instead: the code object
(``marshal``, the child runs the same interpreter), the defaults, the
closure's cell contents, and the globals the code refers to, recursively
(modules by name, importable functions and classes by reference, other
functions by value, other objects by pickle). Functions from the same
module share one globals dict in the child, so they can call each other and
themselves recursively.

What cannot be sent: classes defined in ``__main__`` and objects without
pickle support referred to by the function; the error names them.
"""

import builtins
import importlib
import io
import marshal
import pickle
import sys
import types

# One globals dict per source module in the child process.
_MODULE_GLOBALS = {}


def _globals_for(module_name):
    namespace = _MODULE_GLOBALS.get(module_name)
    if namespace is None:
        namespace = {"__builtins__": builtins, "__name__": module_name}
        _MODULE_GLOBALS[module_name] = namespace
    return namespace


def _make_function(code_bytes, module_name, name, qualname, ncells, by_reference_globals):
    code = marshal.loads(code_bytes)
    if by_reference_globals:
        namespace = importlib.import_module(module_name).__dict__
    else:
        namespace = _globals_for(module_name)
    closure = tuple(types.CellType() for _ in range(ncells)) if ncells else None
    function = types.FunctionType(code, namespace, name, None, closure)
    function.__qualname__ = qualname
    function.__module__ = module_name
    return function


def _set_function_state(function, state):
    globals_values, defaults, kwdefaults, cells, attributes = state
    for key, value in globals_values.items():
        function.__globals__.setdefault(key, value)
    function.__defaults__ = defaults
    function.__kwdefaults__ = kwdefaults
    for cell, (filled, value) in zip(function.__closure__ or (), cells):
        if filled:
            cell.cell_contents = value
    function.__dict__.update(attributes)


def _import_module(name):
    return importlib.import_module(name)


def _referenced_names(code, names=None):
    names = set() if names is None else names
    names.update(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _referenced_names(constant, names)
    return names


def _importable(obj):
    """True if pickle can find `obj` by module and qualified name."""
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module_name or not qualname or module_name == "__main__" or "<" in qualname:
        return False
    module = sys.modules.get(module_name)
    if module is None:
        return False
    found = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return found is obj


class FunctionPickler(pickle.Pickler):
    """A pickler that sends non-importable functions by value."""

    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return _import_module, (obj.__name__,)
        if isinstance(obj, types.FunctionType) and not _importable(obj):
            return self._reduce_function(obj)
        return NotImplemented

    def _reduce_function(self, function):
        code = function.__code__
        module_name = function.__module__ or "__main__"
        module = sys.modules.get(module_name)
        # Functions of an importable module (not __main__) get that module's
        # dict in the child; __main__'s globals are sent by value.
        by_reference = (module_name != "__main__" and module is not None
                        and getattr(module, "__spec__", None) is not None
                        and function.__globals__ is module.__dict__)
        globals_values = {}
        if not by_reference:
            namespace = function.__globals__
            for name in sorted(_referenced_names(code)):
                if name in namespace and name != "__builtins__":
                    globals_values[name] = namespace[name]
        cells = []
        for cell in function.__closure__ or ():
            try:
                cells.append((True, cell.cell_contents))
            except ValueError:  # an empty cell
                cells.append((False, None))
        state = (globals_values, function.__defaults__, function.__kwdefaults__, cells,
                 dict(function.__dict__))
        args = (marshal.dumps(code), module_name, function.__name__, function.__qualname__,
                len(function.__closure__ or ()), by_reference)
        return _make_function, args, state, None, None, _set_function_state


def dumps(obj):
    """Pickles `obj`, functions by value where they are not importable."""
    buffer = io.BytesIO()
    try:
        FunctionPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except Exception as e:
        raise TypeError(
            "dgad.grad: cannot send the function to the recording process: %s. "
            "Everything the function refers to must be picklable or importable "
            "(classes defined in __main__ are not)." % e) from e
    return buffer.getvalue()


def loads(data):
    return pickle.loads(data)
