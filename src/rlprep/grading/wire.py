"""The restricted format in which values cross between the grader and the learner's kernel.

A value is a tree of None, bool, int, float, str, list, tuple, dict (str keys), numpy arrays and
scalars, and torch tensors. It is written as ``tree.json`` (the structure) plus ``arrays.npz`` (the
array data). Decoding uses ``json`` and ``np.load(allow_pickle=False)`` and builds only these plain
types, so nothing the learner's kernel writes can run code in the grader or carry a rigged ``__eq__``.
Anything else (an object, a subclass of ndarray, a generator) is refused when encoding.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

MAX_DEPTH = 8
_ARRAY_KINDS = "biufc"


class WireError(TypeError):
    """A value that the restricted format cannot carry."""


def _describe(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _torch():
    import sys

    return sys.modules.get("torch")


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
        if t is str:
            return {"t": "str", "v": x}
        if t is list or t is tuple:
            return {"t": t.__name__, "items": [walk(v, depth + 1) for v in x]}
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
            return {"t": "tensor", "k": add(np.array(arr, copy=True)), "dtype": dtype,
                    "requires_grad": bool(x.requires_grad)}
        raise WireError(
            f"got an object of type {_describe(x)}; graded functions must return numpy arrays, torch tensors, "
            "numbers, str, bool, None, or lists/tuples/dicts of them"
        )

    return walk(obj, 0), arrays


def decode(tree: dict, arrays) -> object:
    """Rebuild a value from ``encode``'s output, creating only plain types."""
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
            arr = np.asarray(arrays[str(node["k"])])
            if type(arr) is not np.ndarray or arr.dtype.kind not in _ARRAY_KINDS:
                raise WireError("malformed array")
            if t == "ndarray":
                return arr
            if t == "npscalar":
                return arr[()]
            import torch

            tensor = torch.from_numpy(arr.copy())
            dtype = getattr(torch, str(node.get("dtype", "")), None)
            if isinstance(dtype, torch.dtype):
                tensor = tensor.to(dtype)
            if node.get("requires_grad") and tensor.is_floating_point():
                tensor.requires_grad_(True)
            return tensor
        raise WireError(f"unknown node type {t!r}")

    return walk(tree, 0)


def write(path: Path, name: str, obj) -> None:
    """Write ``obj`` as ``<name>.json`` + ``<name>.npz`` under ``path`` (raises WireError first)."""
    tree, arrays = encode(obj)
    path = Path(path)
    np.savez(path / f"{name}.npz", **arrays)
    tmp = path / f".{name}.json.tmp"
    tmp.write_text(json.dumps(tree))
    os.replace(tmp, path / f"{name}.json")


def read(path: Path, name: str):
    """Read what ``write`` wrote: json + ``np.load(allow_pickle=False)`` only."""
    path = Path(path)
    tree = json.loads((path / f"{name}.json").read_text())
    with np.load(path / f"{name}.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    return decode(tree, arrays)


def serve(namespace: dict, func_name: str, call_dir: str, mode: str = "call", wrt=()) -> None:
    """Run in the learner's kernel: call ``namespace[func_name]`` on ``call_dir/args`` and write the result.

    mode "call": result = fn(*args, **kwargs). mode "value_and_grad": result = (value, {name: grad})
    for the keyword arguments named in ``wrt`` (see ``rlprep.grading.asserts.value_and_grad``).
    Errors are written to ``error.json`` as type name and message (the grader shows them to the learner).
    """
    call_dir = Path(call_dir)
    try:
        fn = namespace.get(func_name)
        if fn is None or not callable(fn):
            raise NameError(f"name {func_name!r} is not defined: run its answer cell (it must define {func_name})")
        args, kwargs = read(call_dir, "args")
        if mode == "call":
            result = fn(*args, **kwargs)
        else:
            from rlprep.grading.asserts import value_and_grad

            result = value_and_grad(fn, wrt=tuple(wrt), **kwargs)
        write(call_dir, "result", result)
    except BaseException as err:  # noqa: BLE001 - everything, SystemExit included, is reported to the grader
        (call_dir / "error.json").write_text(json.dumps({"type": type(err).__name__, "message": str(err)[:2000]}))
