"""Field docstrings become the published schema's descriptions."""

from __future__ import annotations

from sitegen.core.strict_model import StrictModel, field_docstrings


class Base(StrictModel):
    kept: int = 1
    """Declared in the base class.

    Second paragraph, dedented."""
    replaced: str = ""
    """The base's words."""


class Child(Base):
    replaced: str = "x"
    """The child's words."""
    undocumented: float = 0.0
    after_a_gap: int = 0

    """A string after a blank line is still the field's docstring."""

    class Nested(StrictModel):
        inner: bool = False
        """Inside a nested class."""


def test_docstrings_of_a_class_its_bases_and_nested_classes():
    assert field_docstrings(Child) == {
        "kept": "Declared in the base class.\n\nSecond paragraph, dedented.",
        "replaced": "The child's words.",
        "after_a_gap": "A string after a blank line is still the field's docstring.",
    }
    assert field_docstrings(Child.Nested) == {"inner": "Inside a nested class."}


def test_the_json_schema_describes_each_documented_field_only():
    properties = Child.model_json_schema()["properties"]
    assert properties["replaced"]["description"] == "The child's words."
    assert properties["kept"]["description"].startswith("Declared in the base class.")
    assert "description" not in properties["undocumented"]
