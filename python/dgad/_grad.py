"""``dgad.grad``, ``jacobian`` and ``jvp``: run a function in a child
process under libdgad.so and read its derivatives.

The function runs in a new ``python3`` (this interpreter, ``sys.executable``)
started with ``LD_PRELOAD=libdgad.so`` (``python3 -m dgad._child DIR``,
``DIR`` a fresh directory), in one of two modes:

* record mode (``grad``, ``value_and_grad``, ``jacobian``, ``jvp(...,
  mode="tape")``): the child marks the inputs, calls the function, marks
  the results and writes their values. ``grad`` and ``jacobian`` keep the
  tape in the child's memory and the runtime sweeps it there at exit
  (``DGAD_GRAD``), writing only the results; ``jvp(..., mode="tape")``
  records a tape file that ``dg-eval --forward`` sweeps.
* forward mode (``jvp``'s default when the library has it,
  ``DGAD_MODE=dot``): the child gives the inputs the direction as dot
  values, calls the function and writes the results' values and dot
  values, J·v; no tape, no ``dg-eval``.

Finding the tools (first hit wins):

* libdgad.so: ``$DGAD_LIB``; ``PREFIX/lib`` when this package is installed
  as ``PREFIX/lib/python3/site-packages/dgad`` (``scripts/install.sh``);
  ``$CARGO_TARGET_DIR/release``; the repository's ``target/release`` (the
  repository that holds this package, or the one recorded when the package
  was installed with pip).
* dg-eval: ``$DGAD_EVAL``; next to the libdgad.so found, or in ``../bin``
  from it (an installed prefix); the places above; ``dg-eval`` in ``PATH``.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from . import _funcpickle

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class DgadError(RuntimeError):
    """dgad.grad could not compute the derivative (tool missing, recording
    failed, the function raised, ...); the message says why."""


def _repository_roots():
    roots = []
    try:
        from . import _install_info  # written by setup.py at installation
        roots.append(_install_info.REPOSITORY)
    except ImportError:
        pass
    # python/dgad/_grad.py -> the repository is two levels up.
    roots.append(os.path.dirname(os.path.dirname(_PACKAGE_DIR)))
    return [r for r in roots if r]


def _release_dirs():
    dirs = []
    target = os.environ.get("CARGO_TARGET_DIR")
    for root in _repository_roots():
        if target:
            dirs.append(os.path.join(root, target, "release"))
        dirs.append(os.path.join(root, "target", "release"))
    return list(dict.fromkeys(dirs))


def find_lib():
    """Path of libdgad.so; raises DgadError saying where it looked."""
    explicit = os.environ.get("DGAD_LIB")
    if explicit:
        path = os.path.abspath(explicit)
        if not os.path.isfile(path):
            raise DgadError("DGAD_LIB=%s: no such file" % explicit)
        return path
    tried = []
    prefixes = []
    if _PACKAGE_DIR.endswith(os.path.join("lib", "python3", "site-packages", "dgad")):
        # Installed by scripts/install.sh: PREFIX/lib holds libdgad.so.
        prefixes.append(os.path.normpath(os.path.join(_PACKAGE_DIR, "..", "..", "..")))
    for directory in prefixes + _release_dirs():
        path = os.path.join(directory, "libdgad.so")
        if os.path.isfile(path):
            return path
        tried.append(path)
    raise DgadError(
        "libdgad.so not found (tried %s). Build it with `cargo build --release -p preload` "
        "in the dgad repository, or set DGAD_LIB to its path." % ", ".join(tried))


def find_eval(lib=None):
    """Path of dg-eval; raises DgadError saying where it looked."""
    explicit = os.environ.get("DGAD_EVAL")
    if explicit:
        path = os.path.abspath(explicit)
        if not os.path.isfile(path):
            raise DgadError("DGAD_EVAL=%s: no such file" % explicit)
        return path
    candidates = []
    if lib:
        candidates.append(os.path.join(os.path.dirname(lib), "dg-eval"))
        candidates.append(os.path.join(os.path.dirname(lib), "..", "bin", "dg-eval"))
    candidates += [os.path.join(d, "dg-eval") for d in _release_dirs()]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    on_path = shutil.which("dg-eval")
    if on_path:
        return on_path
    raise DgadError(
        "dg-eval not found (tried %s and PATH). Build it with `cargo build --release -p "
        "evaluator` in the dgad repository, or set DGAD_EVAL to its path."
        % ", ".join(candidates))


def _record_root():
    # The tape is written with pwrite; tmpfs is the fast place for it.
    for directory in ("/dev/shm", None):
        if directory is None or (os.path.isdir(directory) and os.access(directory, os.W_OK)):
            return directory
    return None


def _numbers(x):
    """The inputs as a flat list of floats, and how to rebuild the shape."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        return [float(v) for v in x.ravel()], ("ndarray", x.shape, x.dtype.str)
    if isinstance(x, (list, tuple)):
        values = [float(v) for v in x]
        return values, ("list", len(values), None)
    return [float(x)], ("scalar", None, None)


def _child_environment(lib, mode, directory=None, sweep=None):
    """The environment of a child under `lib` in `mode` ("record", with the
    record directory, or "dot"); `sweep`: the value of DGAD_GRAD (the
    gradient swept in the child at exit) or None (a tape file)."""
    env = dict(os.environ)
    # The user's settings reach the child (DGAD_TAPE_LIMIT, DGAD_CPUID, ...),
    # except those the run sets itself or that would stop it.
    for key in ("DGAD_RECORD", "DGAD_MODE", "DGAD_DISABLE", "DGAD_GRAD", "DGAD_TAPE_FORMAT"):
        env.pop(key, None)
    if sweep is None:
        env.pop("DGAD_TAPE_MEMORY", None)
        if mode == "record":
            # The tape file is for dg-eval alone: dgad's compact format.
            env["DGAD_TAPE_FORMAT"] = "compact"
    else:
        env["DGAD_GRAD"] = sweep
    env["LD_PRELOAD"] = lib
    env["DGAD_MODE"] = mode
    if directory is not None:
        env["DGAD_RECORD"] = directory
    # The child imports this package from where this process found it, and
    # the function's modules from this process's path.
    paths = [os.path.dirname(_PACKAGE_DIR)] + [p or os.getcwd() for p in sys.path]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


_dot_mode_answers = {}


def _has_dot_mode(lib):
    """True when libdgad.so `lib` runs programs in forward mode
    (``DGAD_MODE=dot``): `true` is run under it once per library file (a
    few milliseconds; a library without forward mode stops it with a
    diagnostic)."""
    try:
        info = os.stat(lib)
    except OSError:
        return False
    key = (lib, info.st_mtime_ns, info.st_size)
    if key not in _dot_mode_answers:
        true = shutil.which("true") or "/bin/true"
        result = subprocess.run([true], env=_child_environment(lib, "dot"),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _dot_mode_answers[key] = result.returncode == 0 and b"dgad:" not in result.stderr
    return _dot_mode_answers[key]


def _read_numbers(path):
    with open(path) as f:
        return [[float(v) for v in line.split()] for line in f if line.strip()]


def _count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def _read_hex(path):
    with open(path) as f:
        return f.read().split()


class _ChildRun:
    """One run of `function` at `x` in a child python3 under libdgad.so:
    recorded (`direction` None; the tape is in `directory`) or in forward
    mode with the inputs' dot values `direction` (a flat list). Holds the
    inputs, the kind of result, the results' values and, in forward mode,
    their dot values."""

    def __init__(self, function, x, lib, keep, direction=None, sweep=None):
        self.lib = lib or find_lib()
        self.inputs, self.shape = _numbers(x)
        self.mode = "record" if direction is None else "dot"
        payload = _funcpickle.dumps((function, self.inputs, self.shape, direction))
        # Forward mode writes a few lines only, the recording a tape.
        self.directory = tempfile.mkdtemp(
            prefix="dgad-grad-" if direction is None else "dgad-jvp-",
            dir=_record_root() if direction is None else None)
        self.keep = keep or bool(os.environ.get("DGAD_PY_KEEP"))
        with open(os.path.join(self.directory, "dgad-py-payload"), "wb") as f:
            f.write(payload)
        command = [sys.executable, "-m", "dgad._child", self.directory]
        if self.mode == "record":
            env = _child_environment(self.lib, "record", self.directory, sweep)
            shown = "LD_PRELOAD=%s DGAD_RECORD=%s%s" % (
                self.lib, self.directory, "" if sweep is None else " DGAD_GRAD=" + sweep)
        else:
            env = _child_environment(self.lib, "dot")
            shown = "LD_PRELOAD=%s DGAD_MODE=dot" % self.lib
        result = subprocess.run(command, env=env, stdin=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        stderr = result.stderr.decode(errors="replace")
        values_path = os.path.join(self.directory, "dgad-py-values")
        if result.returncode == 0 and os.path.isfile(values_path):
            sys.stderr.write(stderr)  # the function's own messages, and dgad's
        else:
            directory = self.directory
            self.close()
            raise DgadError(
                "the %s run failed (exit status %d):\n  %s %s\n%s%s"
                % ("recording" if self.mode == "record" else "forward-mode",
                   result.returncode, shown, " ".join(command),
                   stderr.strip() or "(no output on stderr)",
                   "" if self.keep else "\n(keep=True keeps the directory %s)" % directory))
        lines = _read_hex(values_path)
        self.output_kind = lines[0]
        self.values = [float.fromhex(v) for v in lines[1:]]
        self.dots = None
        if self.mode == "dot":
            self.dots = [float.fromhex(v)
                         for v in _read_hex(os.path.join(self.directory, "dgad-py-dots"))]
            if len(self.dots) != len(self.values):
                self.close()
                raise DgadError("the forward-mode run wrote %d dot values for %d results"
                                % (len(self.dots), len(self.values)))

    def close(self):
        if self.directory is None:
            return
        directory, self.directory = self.directory, None
        if self.keep:
            sys.stderr.write("dgad: python: %s directory kept: %s\n"
                             % ("record" if self.mode == "record" else "forward-mode run",
                                directory))
            return
        shutil.rmtree(directory, ignore_errors=True)

    def shaped(self, flat):
        kind, shape, dtype = self.shape
        if kind == "scalar":
            return flat[0]
        if kind == "ndarray":
            import numpy as np
            return np.array(flat, dtype=np.float64).reshape(shape)
        return list(flat)


class _Recording(_ChildRun):
    """One recorded run of `function` at `x`: with `sweep` (``"ones"`` or
    ``"jacobian"``, DGAD_GRAD) the results the child's runtime swept at exit,
    else a tape and its sweeps by ``dg-eval``."""

    def __init__(self, function, x, lib, evaluator, keep, sweep=None):
        lib = lib or find_lib()
        self.evaluator = evaluator
        super().__init__(function, x, lib, keep, sweep=sweep)
        count_in = _count_lines(os.path.join(self.directory, "dg-input-indices"))
        count_out = _count_lines(os.path.join(self.directory, "dg-output-indices"))
        # (A run without inputs records nothing at all.)
        if self.inputs and (count_in, count_out) != (len(self.inputs), len(self.values)):
            self.close()
            raise DgadError("the recording declared %d inputs and %d outputs, expected %d and "
                            "%d (did the function mark values itself?)"
                            % (count_in, count_out, len(self.inputs), len(self.values)))

    def sweep(self, seed_file, seed_lines, result_file, *options):
        with open(os.path.join(self.directory, seed_file), "w") as f:
            f.write("".join(line + "\n" for line in seed_lines))
        return self.evaluate(result_file, *options)

    def evaluate(self, result_file, *options):
        if self.evaluator is None:
            self.evaluator = find_eval(self.lib)
        command = [self.evaluator, self.directory] + list(options)
        result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT,
                                env={k: v for k, v in os.environ.items()
                                     if k != "LD_PRELOAD"})
        if result.returncode != 0:
            raise DgadError("`%s` failed (exit status %d):\n%s"
                            % (" ".join(command), result.returncode,
                               result.stdout.decode(errors="replace")))
        return _read_numbers(os.path.join(self.directory, result_file))


def _scalar_output(recording):
    if len(recording.values) != 1:
        raise DgadError("dgad.grad needs a function with one real result; this one gave %d "
                        "(use dgad.jacobian)" % len(recording.values))


def value_and_grad(function, x, *, lib=None, evaluator=None, keep=False):
    """``(function(x), gradient)``: as ``grad``, with the value computed in
    the recording run."""
    recording = _Recording(function, x, lib, evaluator, keep, sweep="ones")
    try:
        _scalar_output(recording)
        if not recording.inputs:
            return recording.values[0], recording.shaped([])
        rows = _read_numbers(os.path.join(recording.directory, "dg-input-bars"))
        gradient = [row[0] for row in rows]
        if len(gradient) != len(recording.inputs):
            raise DgadError("dg-input-bars has %d values, expected %d"
                            % (len(gradient), len(recording.inputs)))
        return recording.values[0], recording.shaped(gradient)
    finally:
        recording.close()


def grad(function, x, *, lib=None, evaluator=None, keep=False):
    """The gradient of ``function`` at ``x``, recorded under dgad.

    ``x``: a list or tuple of numbers (``function`` receives a list of
    floats, the gradient is a list of floats), a number (``function``
    receives a float, the result is a float), or a numpy array
    (``function`` receives a float64 array marked with ``input_array``, the
    gradient is an array of that shape). ``function`` returns one real
    number.

    Runs ``function`` in a new ``python3`` under ``LD_PRELOAD=libdgad.so``
    in record mode (so it costs a process start under dgad, seconds for
    CPython), with the tape kept in that process's memory and swept
    backwards there at its exit (``DGAD_GRAD``; a tape larger than
    ``DGAD_TAPE_MEMORY`` goes to a file first). ``function`` is sent by value
    if it cannot be imported (lambdas, nested functions, ``__main__``), with
    the globals it uses and its closure. Anything it prints goes to this
    process's stdout. ``lib``/``evaluator`` override the tools' paths
    (default: ``$DGAD_LIB``/``$DGAD_EVAL`` or the repository's
    ``target/release``; ``evaluator`` is not needed here); ``keep=True``
    keeps the record directory (its path is printed on stderr). Raises DgadError when a tool is missing or the run
    fails.
    """
    return value_and_grad(function, x, lib=lib, evaluator=evaluator, keep=keep)[1]


def jacobian(function, x, *, lib=None, evaluator=None, keep=False):
    """The Jacobian of a function with one or several real results, as a
    list of rows (one per result, one column per input, inputs flattened in
    C order), from one recording swept backwards in the recording process at
    its exit, once per result (``DGAD_GRAD=jacobian``)."""
    recording = _Recording(function, x, lib, evaluator, keep, sweep="jacobian")
    try:
        if not recording.values or not recording.inputs:
            return [[0.0] * len(recording.inputs) for _ in recording.values]
        rows = _read_numbers(os.path.join(recording.directory, "dg-jacobian"))
        if [len(r) for r in rows] != [len(recording.inputs)] * len(recording.values):
            raise DgadError("dg-jacobian has %d rows of %s values, expected %d of %d"
                            % (len(rows), sorted({len(r) for r in rows}),
                               len(recording.values), len(recording.inputs)))
        return rows
    finally:
        recording.close()


def jvp(function, x, v, *, mode=None, lib=None, evaluator=None, keep=False):
    """The Jacobian-vector product J(x)·v of ``function`` at ``x`` in the
    direction ``v`` (the directional derivative). ``v`` has as many values
    as ``x`` (flattened in C order); the result has one entry per real
    result of ``function``: a float for one scalar result, else a list.

    ``mode``:

    * ``"dot"``: one run of ``function`` in forward mode
      (``DGAD_MODE=dot``): the inputs get ``v`` as dot values, the results'
      dot values are J·v. No tape is written and ``dg-eval`` is not needed.
    * ``"tape"``: one recording and ``dg-eval --forward`` seeded with ``v``
      (as ``grad``, but the forward sweep).
    * None (default): ``"dot"`` when the libdgad.so found has forward mode,
      else ``"tape"``.
    """
    if mode not in (None, "dot", "tape"):
        raise ValueError("dgad.jvp: mode must be 'dot', 'tape' or None, not %r" % (mode,))
    inputs, _ = _numbers(x)
    direction, _ = _numbers(v)
    if len(direction) != len(inputs):
        raise DgadError("the direction has %d values, x has %d"
                        % (len(direction), len(inputs)))
    lib = lib or find_lib()
    if mode is None:
        mode = "dot" if _has_dot_mode(lib) else "tape"
    if mode == "dot":
        run = _ChildRun(function, x, lib, keep, direction)
        run.close()
        kind, dots = run.output_kind, run.dots
    else:
        kind, dots = _tape_jvp(function, x, direction, lib, evaluator, keep)
    return dots[0] if kind == "scalar" else dots


def _tape_jvp(function, x, direction, lib, evaluator, keep):
    """The results' kind and J·direction from a recording and the forward
    sweep of its tape."""
    recording = _Recording(function, x, lib, evaluator, keep)
    try:
        if not recording.inputs:
            return recording.output_kind, [0.0] * len(recording.values)
        if not recording.values:
            return recording.output_kind, []
        rows = recording.sweep("dg-input-dots", [repr(float(d)) for d in direction],
                               "dg-output-dots", "--forward")
        dots = [row[0] for row in rows]
        if len(dots) != len(recording.values):
            raise DgadError("dg-output-dots has %d values, expected %d"
                            % (len(dots), len(recording.values)))
        return recording.output_kind, dots
    finally:
        recording.close()
