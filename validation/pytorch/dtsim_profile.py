"""Marks a PyTorch training step so that `dtsim import-profile` can read its torch.profiler trace (docs/profiles.md).

annotate(model) registers hooks on the model's layers (by default every leaf module; or the modules you name). In a
trace recorded with torch.profiler they leave, per call of a layer:
  - a scope "dtsim.forward:NAME#params=N" around its forward (N: the parameters the layer owns);
  - an instant "dtsim.backward:NAME" when the gradient of its output is ready, i.e. when its own backward starts.
mark_batch(batch) leaves "dtsim.batch=B" once in the step. Nothing else is needed: the step is torch.profiler's own
"ProfilerStep#K" scope, the optimizer its "Optimizer.step#..." scope.
"""
import torch
from torch.autograd.profiler import record_function


def _marker(name):
    with record_function(name):
        pass


def leaf_layers(model):
    """Every leaf module, by its qualified name (the default layers)."""
    return {name: m for name, m in model.named_modules() if name and not list(m.children())}


def annotate(model, layers=None):
    """Registers the forward scopes and backward markers; returns the hook handles. Raises ValueError when a parameter
    belongs to none of the layers (name the layers that own them) or a name holds '#' or ':'."""
    layers = leaf_layers(model) if layers is None else dict(layers)
    owned = set()
    for name, module in layers.items():
        if "#" in name or ":" in name:
            raise ValueError(f"layer name {name!r}: '#' and ':' are reserved")
        owned.update(id(p) for p in module.parameters())
    missing = [n for n, p in model.named_parameters() if id(p) not in owned]
    if missing:
        raise ValueError(f"parameters outside every layer: {', '.join(missing)}; pass layers= naming their modules")
    handles = []
    for name, module in layers.items():
        params = sum(p.numel() for p in module.parameters() if p.requires_grad)
        scope = f"dtsim.forward:{name}#params={params}"
        state = {}

        def pre(mod, inputs, scope=scope, state=state):
            state.setdefault("open", []).append(record_function(scope))
            state["open"][-1].__enter__()

        def post(mod, inputs, output, name=name, state=state):
            state["open"].pop().__exit__(None, None, None)
            if isinstance(output, torch.Tensor) and output.requires_grad:
                output.register_hook(lambda grad: _marker(f"dtsim.backward:{name}"))

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    return handles


def mark_batch(batch):
    _marker(f"dtsim.batch={int(batch)}")
