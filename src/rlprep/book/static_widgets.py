"""Sliders without a kernel: ``ipywidgets.interact`` replaced by one call at the widgets' default values.

A static site has no kernel, so an ``interact`` cell would leave an empty box. The book's executor runs
``install()`` in the kernel before a notebook's first cell; each ``widgets.interact(f, x=FloatSlider(value=0.2))`` then
draws ``f(x=0.2)`` once (the figure interact draws on first display) and says how to move the slider.
"""

from __future__ import annotations

NOTE = "Run it in JupyterLab to move the slider."


def _default(value):
    """The value interact starts a control at: a widget's ``.value``, a fixed value as it is, a (min, max[, step])
    tuple's midpoint, a list's first option (ipywidgets' abbreviations)."""
    if hasattr(value, "value"):
        return value.value
    if isinstance(value, tuple) and len(value) in (2, 3) and all(isinstance(v, (int, float)) for v in value):
        mid = (value[0] + value[1]) / 2
        return type(value[0])(mid) if isinstance(value[0], int) and isinstance(value[1], int) else mid
    if isinstance(value, (list, dict)) and value:
        return next(iter(value.values())) if isinstance(value, dict) else value[0]
    return value


def _label(name: str, widget) -> str:
    label = getattr(widget, "description", "") or name
    value = _default(widget)
    return f"{label} = {value:.3g}" if isinstance(value, float) else f"{label} = {value}"


def static_interact(f=None, **controls):
    """``interact`` for a page without a kernel: ``f`` called once at the controls' defaults, then a note."""
    from IPython.display import Markdown, display

    if f is None:  # used as @interact(x=...)
        return lambda g: static_interact(g, **controls)
    f(**{name: _default(control) for name, control in controls.items()})
    shown = ", ".join(_label(name, control) for name, control in controls.items())
    display(Markdown(f"*Static figure at the default{'s' if len(controls) > 1 else ''} ({shown}). {NOTE}*"))
    return f


def install() -> None:
    """Replace ``ipywidgets.interact`` in this kernel (notebooks call it as ``widgets.interact``)."""
    import ipywidgets

    ipywidgets.interact = static_interact
