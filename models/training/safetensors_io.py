"""safetensors read/write shared by every training recipe (no PyPI here, so written with numpy/struct).

Format: u64 little-endian header length, a JSON header {name: {dtype, shape, data_offsets: [begin, end)},
"__metadata__": {str: str}}, then the raw little-endian tensor bytes in header order. The header is padded with
spaces to a multiple of 8 bytes (the format allows it) so tensor data starts 8-byte aligned. src/io reads these.

Recipes import it after putting models/training/ on sys.path (see each recipe's common module).
"""
import json
import struct

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "U8": np.uint8, "I8": np.int8, "I32": np.int32, "I64": np.int64}
_NAME_OF = {np.dtype(v): k for k, v in DTYPES.items()}


def write_safetensors(path, tensors, metadata=None):
    """tensors: dict name -> np.ndarray, written in insertion order; metadata values are stored as strings."""
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _NAME_OF[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path):
    """Returns (tensors: dict name -> writable np.ndarray in native byte order, metadata: dict)."""
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen].decode("utf-8"))
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = np.dtype(DTYPES[info["dtype"]])
        arr = np.frombuffer(data[base + begin:base + end], dtype=dtype.newbyteorder("<"))
        out[name] = arr.reshape(info["shape"]).astype(dtype)
    return out, header.get("__metadata__", {})


def load_float32_state(model, tensors, where):
    """Loads tensors (name -> np.ndarray, e.g. F16 as stored) into a torch module as float32, as the engine widens
    them, after checking that the names and shapes are exactly the module's; returns the module in eval mode.
    Raises ValueError naming `where` (the bundle) on any difference."""
    import torch
    own = model.state_dict()
    missing = sorted(set(own) - set(tensors))
    unexpected = sorted(set(tensors) - set(own))
    if missing or unexpected:
        raise ValueError(f"{where}: missing tensors {missing}, unexpected tensors {unexpected}")
    state = {}
    for k, v in own.items():
        if tuple(tensors[k].shape) != tuple(v.shape):
            raise ValueError(f"{where}: tensor {k} has shape {tensors[k].shape}, expected {tuple(v.shape)}")
        state[k] = torch.from_numpy(tensors[k].astype(np.float32))
    model.load_state_dict(state)
    model.eval()
    return model
