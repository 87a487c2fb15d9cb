"""The restricted format in which values cross between the grader and the learner's kernel.

A value is a tree of None, bool, int, float, str, list, tuple, dict (str keys), numpy arrays and
scalars, and torch tensors. It is written as ``tree.json`` (the structure) plus ``arrays.npz`` (the
array data). Decoding uses ``json`` and ``np.load(allow_pickle=False)`` and builds only these plain
types, so nothing the learner's kernel writes can run code in the grader or carry a rigged ``__eq__``.
Anything else (an object, a subclass of ndarray, a generator) is refused when encoding; a namedtuple crosses as
the plain tuple of its items (its methods are never called), other tuple subclasses are refused.

The grader reads what the kernel wrote as untrusted bytes: regular files only (no links, no FIFOs), with size
limits checked before anything is decompressed or allocated. Decoding builds each stored array once per message
however often the tree refers to it, never converts a tensor to a dtype other than the one stored (16-bit floats,
which numpy cannot hold, are stored as float32 and only narrowed back), and caps what it builds in all
(``MAX_DECODED_BYTES``, counted after conversion).
"""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from pathlib import Path

import numpy as np

MAX_DEPTH = 8
MAX_JSON_BYTES = 4 * 2**20
MAX_NPZ_BYTES = 64 * 2**20  # the file, and separately all its arrays once decompressed
MAX_ARRAYS = 4096
MAX_DECODED_BYTES = 64 * 2**20  # everything decoding one message builds (arrays, tensor copies), after conversion
_ARRAY_KINDS = "biufc"
_NARROWED = ("bfloat16", "float16")  # tensor dtypes numpy cannot hold (bfloat16) or encode widens: stored as float32
# Exceptions a test may catch by their builtin type (a learner's ValueError subclass is still a ValueError).
CATCHABLE = ("ValueError", "TypeError", "IndexError", "KeyError", "LookupError", "ZeroDivisionError",
             "ArithmeticError", "RuntimeError", "NotImplementedError")


UNDEFINED = "is not defined: run its answer cell"  # what serve says when K lacks the function (executor reads it)


class WireError(TypeError):
    """A value that the restricted format cannot carry."""


class LearnerCallError(Exception):
    """The learner's function failed in K: it raised, timed out, ended the kernel or returned a bad value.

    ``public`` tells the same failure with nothing the learner's code chose (no message, no exception class of its
    own, nothing read from what K wrote): what a hidden part of a test shows. It defaults to the message, for
    failures the grader words alone (a timeout); every raise that quotes K passes its own ``public``.
    """

    def __init__(self, message: str, public: str | None = None):
        super().__init__(message)
        self.public = message if public is None else public

    def __str__(self) -> str:  # the message as written, also for the KeyError subclass (KeyError quotes it)
        return str(self.args[0]) if self.args else ""


_ERROR_CLASSES: dict[str, type] = {}


def learner_error(func_name: str, info: dict) -> LearnerCallError:
    """The exception a test cell sees when the learner's function raised: a LearnerCallError that is also an
    instance of the builtin type the learner's exception derives from (for ``except ValueError``)."""
    info = info if type(info) is dict else {}  # error.json is K's to write: anything else says nothing
    base = info.get("builtin") if info.get("builtin") in CATCHABLE else None
    if base and base not in _ERROR_CLASSES:
        import builtins

        _ERROR_CLASSES[base] = type(f"Learner{base}", (LearnerCallError, getattr(builtins, base)), {})
    cls = _ERROR_CLASSES.get(base, LearnerCallError)
    detail = f": {str(info.get('message'))[:2000]}" if info.get("message") else ""
    return cls(f"{func_name} raised {str(info.get('type'))[:100]}{detail}", _public_error(func_name, info, base))


def _public_error(func_name: str, info: dict, base: str | None) -> str:
    """What a hidden part says when the learner's function raised: the builtin type, never the learner's message or
    class name (either could spell out the hidden inputs); the grader's own "not defined" note is kept."""
    import builtins

    name = info.get("type")
    if name == "NameError" and info.get("message") == _undefined(func_name):
        return f"{func_name} raised NameError: {_undefined(func_name)}"
    builtin = getattr(builtins, name, None) if type(name) is str else None
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return f"{func_name} raised {name}"
    return f"{func_name} raised a subclass of {base}" if base else f"{func_name} raised an exception"


def _undefined(func_name: str) -> str:
    """The error ``serve`` reports when K has no function ``func_name``."""
    return f"name {func_name!r} {UNDEFINED} (it must define {func_name})"


def _builtin_base(err: BaseException) -> str | None:
    for klass in type(err).__mro__:
        if klass.__module__ == "builtins" and klass.__name__ in CATCHABLE:
            return klass.__name__
    return None


def _describe(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _torch():
    import sys

    return sys.modules.get("torch")


# Names a namedtuple class may define for itself (collections.namedtuple and typing.NamedTuple make these); one
# that defines any other dunder (``__eq__``, ``__iter__``, ``__len__``, ...) is refused like any tuple subclass.
_NAMEDTUPLE_DUNDERS = frozenset({"__doc__", "__getnewargs__", "__match_args__", "__module__", "__new__", "__repr__",
                                 "__slots__", "__annotations__", "__orig_bases__", "__qualname__", "__firstlineno__",
                                 "__static_attributes__"})


def _namedtuple_items(x) -> list | None:
    """The items of ``x`` when it is a namedtuple (a direct tuple subclass with ``_fields`` and no overridden
    dunder), read with ``tuple``'s own methods; None for anything else."""
    klass = type(x)
    own = vars(klass)
    fields = own.get("_fields")
    if klass.__bases__ != (tuple,) or type(fields) is not tuple or not all(type(f) is str for f in fields):
        return None
    if any(name.startswith("__") and name not in _NAMEDTUPLE_DUNDERS for name in own):
        return None
    n = tuple.__len__(x)
    return [tuple.__getitem__(x, i) for i in range(n)] if n == len(fields) else None


def _memory_order(tensor) -> list[int] | None:
    """The dims of a non-contiguous tensor from the outermost in memory to the innermost, when it is a
    permutation of a contiguous block (``x.T``, ``x.transpose(0, 1)``, ``x.permute(...)``); None otherwise
    (contiguous, or strided slices, which cross as contiguous copies)."""
    if tensor.is_contiguous() or tensor.ndim < 2:
        return None
    order = sorted(range(tensor.ndim), key=lambda d: -tensor.stride(d))
    return order if tensor.permute(order).is_contiguous() else None


def encode(obj) -> tuple[dict, dict[str, np.ndarray]]:
    """Split ``obj`` into a JSON-able tree and a dict of numpy arrays; raise WireError otherwise."""
    arrays: dict[str, np.ndarray] = {}

    def add(arr: np.ndarray) -> str:
        key = f"a{len(arrays)}"
        arrays[key] = arr
        return key

    def walk(x, depth):
        if depth > MAX_DEPTH:
            raise WireError("the value is nested too deeply")
        t = type(x)
        if x is None:
            return {"t": "none"}
        if t is bool:
            return {"t": "bool", "v": x}
        if t is int:
            return {"t": "int", "v": str(x)}
        if t is float:
            return {"t": "float", "v": repr(x)}
        if t is str or t is np.str_:
            return {"t": "str", "v": str(x)}
        if t is list or t is tuple:
            return {"t": t.__name__, "items": [walk(v, depth + 1) for v in x]}
        if isinstance(x, tuple) and (items := _namedtuple_items(x)) is not None:
            return {"t": "tuple", "items": [walk(v, depth + 1) for v in items]}
        if t is dict:
            if not all(type(k) is str for k in x):
                raise WireError("dict keys must be str")
            return {"t": "dict", "items": [[k, walk(v, depth + 1)] for k, v in x.items()]}
        if t is np.ndarray or isinstance(x, np.generic) and t.__module__ == "numpy":
            arr = np.asarray(x)
            if type(arr) is not np.ndarray or arr.dtype.kind not in _ARRAY_KINDS:
                raise WireError(f"numpy dtype {arr.dtype} is not a number or bool")
            return {"t": "ndarray" if t is np.ndarray else "npscalar", "k": add(np.array(arr, copy=True))}
        torch = _torch()
        if torch is not None and t in (torch.Tensor, torch.nn.Parameter):
            data = x.detach().cpu()
            dtype = str(data.dtype).removeprefix("torch.")
            if data.dtype in (torch.bfloat16, torch.float16):
                data = data.float()
            arr = data.numpy()
            if arr.dtype.kind not in _ARRAY_KINDS:
                raise WireError(f"tensor dtype {dtype} cannot be carried")
            node = {"t": "tensor", "dtype": dtype, "requires_grad": bool(x.requires_grad)}
            order = _memory_order(data)
            if order is not None:  # a transposed/permuted view: carry its layout, so .view() fails there too
                arr, node["perm"] = data.permute(order).numpy(), order
            node["k"] = add(np.array(arr, copy=True))
            return node
        raise WireError(
            f"got an object of type {_describe(x)}; graded functions must return numpy arrays, torch tensors, "
            "numbers, str, bool, None, or lists/tuples/dicts of them"
        )

    return walk(obj, 0), arrays


def decode(tree: dict, arrays) -> object:
    """Rebuild a value from ``encode``'s output, creating only plain types.

    Each stored array is decoded once per call however many nodes refer to it (one object per key and kind), a
    tensor keeps the dtype it was stored in (bfloat16/float16 only narrow from float32), and everything built here
    counts against ``MAX_DECODED_BYTES``.
    """
    memo: dict[tuple, object] = {}
    left = [MAX_DECODED_BYTES]

    def spend(nbytes: int) -> None:
        if nbytes > left[0]:
            raise WireError(f"the value needs over {MAX_DECODED_BYTES} bytes once decoded")
        left[0] -= nbytes

    def stored(node) -> np.ndarray:
        key = node.get("k")
        if type(key) is not str or key not in arrays:
            raise WireError("malformed value tree: an array node names no stored array")
        arr = arrays[key]
        if type(arr) is not np.ndarray or arr.dtype.kind not in _ARRAY_KINDS:
            raise WireError("malformed array")
        return arr

    def tensor(node, arr: np.ndarray):
        import torch

        declared, perm = node.get("dtype"), node.get("perm")
        if type(declared) is not str:
            raise WireError("malformed value tree: a tensor without a dtype")
        if perm is not None and (type(perm) is not list or not all(type(p) is int for p in perm)
                                 or sorted(perm) != list(range(arr.ndim))):  # types first: sorted() of mixed raises
            raise WireError("malformed tensor layout")
        grad = node.get("requires_grad") is True
        key = ("tensor", node["k"], declared, None if perm is None else tuple(perm), grad)
        if key in memo:
            return memo[key]
        stored = torch.from_numpy(arr)  # shares the loaded array's memory: nothing is allocated yet
        have = str(stored.dtype).removeprefix("torch.")
        if declared != have and not (declared in _NARROWED and have == "float32"):
            raise WireError(f"a tensor declared {str(declared)[:40]} holds {have} data (the value format never "
                            "converts a tensor to another dtype)")
        dtype = getattr(torch, declared)
        spend(stored.numel() * torch.empty((), dtype=dtype).element_size())  # its size after conversion
        out = stored.clone() if declared == have else stored.to(dtype)  # a copy of its own either way
        if perm is not None:
            out = out.permute([perm.index(d) for d in range(out.ndim)])  # back to the original dims
        if grad and out.is_floating_point():
            out.requires_grad_(True)
        memo[key] = out
        return out

    def walk(node, depth):
        if depth > MAX_DEPTH or type(node) is not dict:
            raise WireError("malformed value tree")
        t = node.get("t")
        if t == "none":
            return None
        if t == "bool":
            return bool(node["v"])
        if t == "int":
            return int(str(node["v"]))
        if t == "float":
            return float(str(node["v"]))
        if t == "str":
            return str(node["v"])
        if t in ("list", "tuple"):
            items = [walk(v, depth + 1) for v in node["items"]]
            return items if t == "list" else tuple(items)
        if t == "dict":
            return {str(k): walk(v, depth + 1) for k, v in node["items"]}
        if t in ("ndarray", "npscalar", "tensor"):
            arr = stored(node)
            if t == "tensor":
                return tensor(node, arr)
            if t == "npscalar":
                if arr.ndim != 0:
                    raise WireError("malformed value tree: a numpy scalar holds an array")
                return arr[()]
            key = ("ndarray", node["k"])
            if key not in memo:  # the loaded array itself, no copy: counted once
                spend(arr.nbytes)
                memo[key] = arr
            return memo[key]
        raise WireError(f"unknown node type {str(t)[:40]!r}")

    return walk(tree, 0)


def write(path: Path, name: str, obj) -> None:
    """Write ``obj`` as ``<name>.json`` + ``<name>.npz`` under ``path`` (raises WireError first)."""
    tree, arrays = encode(obj)
    path = Path(path)
    np.savez(path / f"{name}.npz", **arrays)
    tmp = path / f".{name}.json.tmp"
    tmp.write_text(json.dumps(tree))
    os.replace(tmp, path / f"{name}.json")


def _read_untrusted(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; links, FIFOs and larger files are refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:  # no result written: the caller says so
        raise
    except OSError as err:
        raise WireError(f"{Path(path).name} cannot be opened as a plain file ({err.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise WireError(f"{Path(path).name} is not a plain file")
        if info.st_size > limit:
            raise WireError(f"{Path(path).name} is {info.st_size} bytes, over the {limit} byte limit")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise WireError(f"{Path(path).name} grew past the {limit} byte limit")
    return data


def read_json(path: Path):
    try:
        return json.loads(_read_untrusted(path, MAX_JSON_BYTES))
    except (ValueError, RecursionError) as err:
        raise WireError(f"malformed {Path(path).name}: {err}") from None


def _load_npz(data: bytes) -> dict[str, np.ndarray]:
    """Arrays of an .npz, after checking every member's decompressed size and declared array size."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = zf.infolist()
            if len(members) > MAX_ARRAYS:
                raise WireError(f"{len(members)} arrays, over the {MAX_ARRAYS} limit")
            if sum(m.file_size for m in members) > MAX_NPZ_BYTES:
                raise WireError(f"the arrays hold over {MAX_NPZ_BYTES} bytes once decompressed")
            arrays = {}
            for m in members:
                with zf.open(m) as f:  # zipfile stops at the declared size and checks the CRC
                    fmt = np.lib.format
                    version = fmt.read_magic(f)
                    header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                    shape, _, dtype = header(f)
                    if dtype.hasobject or int(np.prod(shape, dtype=np.int64)) * dtype.itemsize > m.file_size:
                        raise WireError("an array header does not match its data")
                with zf.open(m) as f:
                    arrays[m.filename.removesuffix(".npy")] = np.lib.format.read_array(f, allow_pickle=False)
            return arrays
    except WireError:
        raise
    except Exception as err:  # any malformed archive is the kernel's fault
        raise WireError(f"malformed arrays: {type(err).__name__}: {err}") from None


def read(path: Path, name: str):
    """Read what ``write`` wrote, as untrusted input: json + ``allow_pickle=False`` arrays, sizes checked."""
    path = Path(path)
    tree = read_json(path / f"{name}.json")
    arrays = _load_npz(_read_untrusted(path / f"{name}.npz", MAX_NPZ_BYTES))
    return decode(tree, arrays)


def serve(namespace: dict, func_name: str, args_dir: str, out_dir: str, mode: str = "call", wrt=()) -> None:
    """Run in the learner's kernel: call ``namespace[func_name]`` on ``args_dir/args``, write to ``out_dir``.

    mode "call": result = fn(*args, **kwargs). mode "value_and_grad": result = (value, {name: grad})
    for the keyword arguments named in ``wrt`` (see ``rlprep.grading.asserts.value_and_grad``).
    Errors are written to ``error.json`` as type name, builtin base and message (the grader shows them).
    """
    out = Path(out_dir)
    out.mkdir()
    try:
        fn = namespace.get(func_name)
        if fn is None or not callable(fn):
            raise NameError(_undefined(func_name))
        args, kwargs = read(Path(args_dir), "args")
        if mode == "call":
            result = fn(*args, **kwargs)
        else:
            from rlprep.grading.asserts import value_and_grad

            result = value_and_grad(fn, wrt=tuple(wrt), **kwargs)
        write(out, "result", result)
    except BaseException as err:  # everything, SystemExit included, is reported to the grader
        info = {"type": type(err).__name__, "builtin": _builtin_base(err), "message": str(err)[:2000]}
        (out / "error.json").write_text(json.dumps(info))
