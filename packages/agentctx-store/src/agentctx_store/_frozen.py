"""`@frozen`: what `@dataclass(frozen=True, kw_only=True)` generates, without importing `dataclasses`.

The record types (`Record`, `NewRecord`, `Project`, `SearchHit`, `SearchResult`, `Budget`) sit
on the path of the UserPromptSubmit hook, a fresh process on every prompt. `import dataclasses`
pulls in `inspect` (and with it `ast`, `dis`, `tokenize`), a large share of a bare interpreter's
start-up, spent before the hook has read a byte (bench/README.md#the-hook-path). This
decorator gives the same behaviour: a keyword-only `__init__` with defaults and default
factories (generated source, as dataclasses does; the only part compiled, which is the cost),
`__repr__`, `__eq__` over the fields in order, `__hash__` of them, and assignment or deletion
raising `dataclasses.FrozenInstanceError` (imported only then). `tests/test_frozen.py` holds each
class equal in behaviour to its `dataclasses` twin.

`replace(obj, **changes)` is `dataclasses.replace` for these classes. Not provided:
`dataclasses.fields()`, `asdict()` (nothing uses them; `Record.to_dict()` is the plain form).
Type checkers see a dataclass (PEP 681).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_options):  # the real one only matters to type checkers
        return lambda decorated: decorated


_MISSING = object()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


if TYPE_CHECKING:  # what type checkers see, as for `dataclasses.field`: the field's own type

    def field(*, default_factory: Callable[[], _T]) -> _T: ...

else:

    def field(*, default_factory):
        """A field whose default is made fresh for each instance (as `dataclasses.field`)."""
        return _Factory(default_factory)


def frozen_error(name: str) -> Exception:
    """`dataclasses.FrozenInstanceError`, imported only when someone tries to change a record."""
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(f"cannot assign to field {name!r}")


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[_T]) -> type[_T]:
    """Give `cls` the methods of a frozen keyword-only dataclass, from its own annotations."""
    names = list(cls.__dict__.get("__annotations__", {}))
    defaults: dict[str, object] = {}
    for name in names:
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, _Factory):
            defaults[name] = value
            delattr(cls, name)  # as dataclasses does: the class keeps plain defaults only
        elif value is not _MISSING:
            defaults[name] = value
    params: list[str] = []
    values: list[str] = []
    for name in names:
        default = defaults.get(name, _MISSING)
        if default is _MISSING:
            params.append(name)
            values.append(name)
        elif isinstance(default, _Factory):
            params.append(f"{name}=_MISSING")
            values.append(f"_default_{name}.make() if {name} is _MISSING else {name}")
        else:
            params.append(f"{name}=_default_{name}")
            values.append(name)
    # One statement, not one `object.__setattr__` per field: compiling is the cost, and half the
    # source compiles in about half the time (bench/README.md#the-hook-path); filling the
    # instance's dict at once is what `object.__setattr__` does field by field on a class without
    # slots or descriptors.
    if not names:
        body = "  pass"
    elif "__slots__" in cls.__dict__:
        body = f"  for _name, _value in zip(_names, ({', '.join(values)},)): _set(self, _name, _value)"
    else:
        body = f"  self.__dict__.update(zip(_names, ({', '.join(values)},)))"
    source = f"def __init__(self, *, {', '.join(params)}):\n{body}" if params else f"def __init__(self):\n{body}"
    namespace: dict[str, Any] = {"_set": object.__setattr__, "_MISSING": _MISSING, "_names": tuple(names)}
    namespace.update((f"_default_{name}", value) for name, value in defaults.items())
    exec(source, namespace)  # our own generated source, as dataclasses does; only __init__ (compiling is the cost)
    methods = _methods(cls, tuple(names))
    methods["__init__"] = namespace["__init__"]
    for method, function in methods.items():
        function.__qualname__ = f"{cls.__qualname__}.{method}"
        setattr(cls, method, function)
    setattr(cls, "__frozen_fields__", tuple(names))  # noqa: B010  (for `replace`)
    # keyword-only fields are not positional patterns (setattr: `type` declares no __match_args__)
    setattr(cls, "__match_args__", ())  # noqa: B010
    return cls


def replace(obj: _T, **changes: object) -> _T:
    """A copy of `obj` (of a `@frozen` class) with `changes`, as `dataclasses.replace`: the
    other fields carry over, and the class's own `__init__` checks the names."""
    names: tuple[str, ...] = getattr(type(obj), "__frozen_fields__")  # noqa: B009
    return type(obj)(**({name: getattr(obj, name) for name in names} | changes))


def _methods(cls: type, names: tuple[str, ...]) -> dict[str, Callable[..., Any]]:
    """`__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__` as dataclasses writes them."""

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return tuple(getattr(self, name) for name in names) == tuple(getattr(other, name) for name in names)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in names))

    def __setattr__(self: Any, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise frozen_error(name)
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise frozen_error(name)
        super(cls, self).__delattr__(name)

    return {
        "__repr__": __repr__,
        "__eq__": __eq__,
        "__hash__": __hash__,
        "__setattr__": __setattr__,
        "__delattr__": __delattr__,
    }
