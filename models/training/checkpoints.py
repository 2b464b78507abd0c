"""Shared by the recipes' training scripts: checkpoints are written with CPU tensors whatever the training device,
so that export and evaluation read them on a machine without a GPU."""
import torch


def to_cpu(obj):
    """obj with every tensor inside (dicts, lists, tuples) moved to the CPU."""
    if torch.is_tensor(obj):
        return obj.cpu()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj
