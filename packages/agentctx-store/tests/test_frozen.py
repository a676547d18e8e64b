"""`@frozen` (agentctx_store._frozen) behaves as `@dataclass(frozen=True, kw_only=True)` would
for every class that uses it: each is compared with a real dataclass built from its own
annotations and defaults (signature, repr, equality, hashing, immutability, fresh defaults).
`Project`, written out by hand (every hook builds one), is held to the same."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from pathlib import Path
from typing import Any

import pytest

from agentctx_store import NewRecord, Project, Record, SearchHit, SearchResult
from agentctx_store._frozen import field, frozen, replace
from agentctx_store.budget import Budget

CLASSES = [Record, NewRecord, Project, SearchHit, SearchResult, Budget]


@dataclasses.dataclass(frozen=True, kw_only=True)
class _ProjectTwin:
    project_id: str
    root: Path
    name: str
    remote: str | None = None


FIELDS = {Project: ("project_id", "root", "name", "remote")}


def _fields(cls: type) -> tuple[str, ...]:
    return FIELDS.get(cls) or tuple(cls.__annotations__)


def _twin(cls: type) -> type:
    """The same class body under the real `dataclasses` decorator."""
    if cls is Project:
        return _ProjectTwin
    body: dict[str, Any] = {"__annotations__": dict(cls.__annotations__), "__qualname__": cls.__qualname__}
    for name in cls.__annotations__:
        if name in cls.__dict__:
            body[name] = cls.__dict__[name]
        else:  # a default factory (deleted from the class, as dataclasses does) or required
            signature_default = inspect.signature(cls).parameters[name].default
            if signature_default is not inspect.Parameter.empty:
                made = cls.__init__.__globals__[f"_default_{name}"].make
                body[name] = dataclasses.field(default_factory=made)
    return dataclasses.dataclass(frozen=True, kw_only=True)(type(cls.__name__, (), body))


def _sample(cls: type, seed: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, parameter in inspect.signature(cls).parameters.items():
        if parameter.default is inspect.Parameter.empty:
            values[name] = Path(f"/tmp/{seed}") if name == "root" else f"{name}-{seed}"
    return values


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_signature_repr_equality_and_hash_match_a_real_dataclass(cls: type) -> None:
    twin = _twin(cls)
    ours, theirs = inspect.signature(cls), inspect.signature(twin)
    assert [(p.name, p.kind) for p in ours.parameters.values()] == [
        (p.name, p.kind) for p in theirs.parameters.values()
    ]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in ours.parameters.values())
    values = _sample(cls, "a")
    mine, reference = cls(**values), twin(**values)
    assert repr(mine) == repr(reference).replace("_ProjectTwin(", "Project(")
    assert mine == cls(**values)
    assert (mine != cls(**values)) is False
    if values:
        assert mine != cls(**_sample(cls, "b"))
    assert mine != reference  # another class is never equal, as with dataclasses
    assert cls.__match_args__ == twin.__match_args__ == ()
    for name in _fields(cls):
        assert getattr(mine, name) == getattr(reference, name)
    try:
        expected_hash: int | None = hash(reference)
    except TypeError:  # a dict field (NewRecord.extra) makes both unhashable
        expected_hash = None
    if expected_hash is None:
        with pytest.raises(TypeError):
            hash(mine)
    else:
        assert hash(mine) == expected_hash


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_instances_are_immutable_and_calls_checked_like_dataclasses(cls: type) -> None:
    values = _sample(cls, "a")
    item = cls(**values)
    first = _fields(cls)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(item, first, "changed")
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(item, first)
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.not_a_field = 1
    with pytest.raises(TypeError):
        cls("positional", **dict(list(values.items())[1:]))
    with pytest.raises(TypeError):
        cls(**values, not_a_field=1)
    if values:
        with pytest.raises(TypeError):
            cls(**dict(list(values.items())[1:]))


def test_default_factories_give_each_instance_its_own_value() -> None:
    one, two = SearchResult(), SearchResult()
    assert one.hits == [] and one.hits is not two.hits
    extra_one = NewRecord(type="decision", title="t", body="b").extra
    assert extra_one == {} and extra_one is not NewRecord(type="decision", title="t", body="b").extra
    given = [SearchHit(record=None, score=1.0, relevance=1.0)]  # type: ignore[arg-type]
    assert SearchResult(hits=given).hits is given
    assert "hits" not in SearchResult.__dict__  # factory fields leave no class attribute
    assert Record.__dict__["scope"] == "project"  # plain defaults stay on the class, as dataclasses leaves them


@pytest.mark.parametrize("cls", [cls for cls in CLASSES if cls is not Project], ids=lambda cls: cls.__name__)
def test_replace_copies_every_field_but_the_changed_ones_like_dataclasses_replace(cls: type) -> None:
    values = _sample(cls, "a")
    item, twin = cls(**values), _twin(cls)(**values)
    first = _fields(cls)[0]
    changed = replace(item, **{first: "changed"})
    assert type(changed) is cls and changed != item
    reference = dataclasses.replace(twin, **{first: "changed"})
    assert all(getattr(changed, name) == getattr(reference, name) for name in _fields(cls))
    assert replace(item) == item
    with pytest.raises(TypeError):
        replace(item, not_a_field=1)


def test_subclass_of_a_frozen_class_may_set_its_own_attributes_but_not_fields() -> None:
    @frozen
    class Base:
        name: str
        tags: list[str] = field(default_factory=list)

    class Child(Base):
        pass

    child = Child(name="x")
    child.other = 1
    assert child.other == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.name = "y"


def test_a_class_with_slots_or_without_fields_is_built_too() -> None:
    """The generated `__init__` fills the instance's dict in one statement; a class with
    `__slots__` has none, so its fields are set one by one instead."""

    @frozen
    class Slotted:  # slots leave no room for class-level defaults: required fields only
        __slots__ = ("name", "size")
        name: str
        size: int

    one = Slotted(name="x", size=1)
    assert (one.name, one.size) == ("x", 1) and one == Slotted(name="x", size=1) != Slotted(name="x", size=2)
    assert not hasattr(one, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.name = "y"
    with pytest.raises(TypeError):
        Slotted(name="x", size=1, other=1)  # type: ignore[call-arg]

    @frozen
    class Empty:
        pass

    assert Empty() == Empty() and repr(Empty()) == f"{Empty.__qualname__}()"
    with pytest.raises(TypeError):
        Empty(name="x")  # type: ignore[call-arg]


def test_a_project_survives_pickling_and_copying() -> None:
    import copy

    project = Project(project_id="p", root="/tmp/x", name="x", remote="github.com/o/r")
    for clone in (pickle.loads(pickle.dumps(project)), copy.copy(project), copy.deepcopy(project)):
        assert clone == project and clone.remote == "github.com/o/r"
