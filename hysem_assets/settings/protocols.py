"""Review protocols: the fields a review extracts, declared per query in ``config/protocols/<name>.yaml``.

Everything that gives a corpus its meaning comes from the protocol a query names: what to
extract and how each value is typed, which values become graph nodes or Article
properties, which words a question uses for them, optional synonym dictionaries, broader
terms and saved reports. No review subject lives in code, so a query on any subject works
with the ``generic`` protocol, and a review team writes its own file for anything else.

A protocol is checked whole before any run starts; every error names the file and field.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hysem_assets.core.records import CORE_COLUMNS
from hysem_assets.settings.environment import config_dir
from hysem_assets.settings.fields import RESERVED_NAMES, ROLES, FieldSpec, PropertySpec
from hysem_assets.settings.yamlfile import ConfigFileError, read_yaml_mapping

if TYPE_CHECKING:
    from hysem_assets.settings.dictionaries import SynonymDictionary

log = logging.getLogger(__name__)

#: The protocol a query without ``protocol:`` gets.
DEFAULT_PROTOCOL = "generic"

FieldType = Literal["category", "terms", "number", "text"]
#: What a number measures: a head count, a duration, a ratio estimate with its interval,
#: a named performance metric, or any other quantity in ``unit``.
NumberKind = Literal["count", "duration", "effect_estimate", "metric", "quantity"]

#: Names a field cannot take: the columns an extraction row, the corpus and the evidence table put beside
#: the fields (a field called ``year`` would overwrite the publication year). ``<field>_evidence`` is taken too.
RESERVED_FIELD_NAMES = (
    RESERVED_NAMES
    | set(CORE_COLUMNS)
    | {"evidence", "protocol", "text_source", "cluster_id", "cache_hits", "citation", "topic", "retracted"}
)
#: Most fields a protocol declares: every field is a prompt section, a column and a pass of the extractor,
#: and a review's data-extraction form rarely has more than a few dozen.
MAX_FIELDS = 100
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
#: Properties of one estimate record, in the order a reader expects them.
ESTIMATE_PROPERTIES = {
    "measure": PropertySpec(value="string", required=True, description="What is estimated, e.g. hazard ratio."),
    "value": PropertySpec(value="number", required=True, description="The point estimate as a number."),
    "unit": PropertySpec(
        value="string", description='The unit of the value and its interval, e.g. "%" or "mg/dL"; null for ratios.'
    ),
    "ci_lower": PropertySpec(value="number", description="Lower bound of its confidence interval, if given."),
    "ci_upper": PropertySpec(value="number", description="Upper bound of its confidence interval, if given."),
    "p_value": PropertySpec(value="string", description="Its p-value as reported, e.g. 0.04 or < 0.001, if given."),
    "context": PropertySpec(value="string", description="What the estimate compares or describes."),
}
METRIC_PROPERTIES = {
    "name": PropertySpec(value="string", required=True, description="The metric as reported, e.g. AUC or RMSE."),
    "value": PropertySpec(value="number", required=True, description="The reported value as a number, no unit."),
    "unit": PropertySpec(value="string", description='The unit of the value, e.g. "%"; null for unitless scores.'),
    "ci_low": PropertySpec(value="number", description="Lower bound of the reported interval, if any."),
    "ci_high": PropertySpec(value="number", description="Upper bound of the reported interval, if any."),
    "context": PropertySpec(value="string", description="What the value describes, e.g. the model and data."),
}


class ProtocolError(ValueError):
    """A protocol that is missing or does not describe a review correctly."""


class StaleProtocolError(ProtocolError):
    """Extracted rows that another protocol (or an earlier version of this one) produced."""


def _identifier(value: str, what: str) -> str:
    if not _IDENTIFIER.match(value):
        raise ValueError(f"{what} {value!r} must be a plain identifier (letters, digits, '_'; a letter first)")
    return value


class GraphLink(BaseModel):
    """How a field reaches the knowledge graph: entity nodes linked from Article, or one Article property."""

    model_config = ConfigDict(extra="forbid")

    node: str | None = None
    relationship: str | None = None
    #: Words a question uses for these entities ("which outcomes", "how many exposures").
    words: list[str] = Field(default_factory=list)
    property: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> GraphLink:
        if self.property is not None:
            if self.node or self.relationship or self.words:
                raise ValueError("give either `property` or `node` (with `relationship`, `words`), not both")
            _identifier(self.property, "property")
            return self
        if not self.node:
            raise ValueError("a graph link needs a `node` label (entities) or a `property` name (Article property)")
        _identifier(self.node, "node label")
        if self.relationship is not None:
            _identifier(self.relationship, "relationship type")
        return self


class ProtocolField(BaseModel):
    """One field of a review: its type, the explanation a model (and the embedded extractor) reads, and its graph role."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: FieldType
    description: str = Field(min_length=1)
    #: category: allowed value -> what it means (cue phrases help the embedded extractor).
    values: dict[str, str] | None = None
    #: number: what it measures, its unit, and whether a work reports several.
    kind: NumberKind | None = None
    unit: str | None = None
    many: bool = False
    #: A synonym dictionary, ``config/dictionaries/<dictionary>.yaml``: the terms a terms field finds, the
    #: canonical names of metrics, or the terms a text field is normalised to when it becomes a property.
    dictionary: str | None = None
    #: Phrases that announce a value in text ("primary outcome", "compared with").
    cues: list[str] = Field(default_factory=list)
    #: How the embedded extractor fills it, when not by its type: ``tagger:<role>`` takes the trained span
    #: tagger's participants, interventions, comparators or outcomes (hysem_assets/pico).
    method: str | None = None
    #: category: allowed value -> the publication types that state it (PubMed's PublicationType, the type
    #: OpenAlex, Crossref or Scopus gives). A work whose source states one takes that value, whatever the text says.
    publication_types: dict[str, list[str]] | None = None
    graph: GraphLink | None = None

    @field_validator("values", mode="before")
    @classmethod
    def _values_as_mapping(cls, value: object) -> object:
        if isinstance(value, list):
            return {str(item): "" for item in value}
        if isinstance(value, dict):
            return {str(k): "" if v is None else v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ProtocolField:
        if self.name in RESERVED_FIELD_NAMES or self.name.endswith("_evidence"):
            raise ValueError(
                f"field name {self.name!r} is reserved: hysem's tables already have a column of that name "
                "(a built-in column, or <field>_evidence); rename the field"
            )
        if (self.type == "category") != bool(self.values):
            raise ValueError("`values` (the allowed categories) is required for a category field and only there")
        if self.type != "number" and (self.kind or self.unit or self.many):
            raise ValueError("`kind`, `unit` and `many` apply to number fields only")
        if self.dictionary is not None and not (self.type in ("terms", "text") or self.kind == "metric"):
            raise ValueError("`dictionary` applies to terms, text and metric fields only")
        if self.kind == "metric" and self.dictionary is None:
            raise ValueError("a metric number needs a `dictionary` of metric names")
        if self.method is not None:
            kind, _, role = self.method.partition(":")
            if kind != "tagger" or role not in ROLES:
                raise ValueError(f"`method` must be one of {[f'tagger:{r}' for r in ROLES]} (got {self.method!r})")
            if self.type not in ("terms", "text"):
                raise ValueError("a tagger `method` fills terms and text fields only")
        if self.publication_types is not None:
            if self.type != "category":
                raise ValueError("`publication_types` applies to category fields only")
            unknown = sorted(set(self.publication_types) - set(self.values or {}))
            if unknown:
                raise ValueError(f"`publication_types` names values the field does not allow: {unknown}")
        if self.graph is not None:
            if self.graph.node and self.type != "terms":
                raise ValueError("only a terms field becomes graph nodes; give other fields a `property`")
            if self.graph.property and self.records:
                raise ValueError("a field with several records per work cannot be one Article property")
        return self

    @property
    def number_kind(self) -> NumberKind:
        return self.kind or "quantity"

    @property
    def records(self) -> bool:
        """Several typed records per work (effect estimates, metrics) rather than one value."""
        return self.type == "number" and (self.many or self.number_kind in ("effect_estimate", "metric"))

    def extraction_spec(self) -> FieldSpec:
        """The shape the extraction engine validates and merges (and the JSON schema servers get)."""
        description = self.description
        if self.type == "category":
            return FieldSpec(name=self.name, type="text", description=description, enum=list(self.values or {}))
        if self.type == "terms":
            return FieldSpec(name=self.name, type="list", description=description)
        if self.type == "text":
            return FieldSpec(name=self.name, type="text", description=description)
        if self.unit:
            description += f" Unit: {self.unit}."
        if self.records:
            properties = METRIC_PROPERTIES if self.number_kind == "metric" else ESTIMATE_PROPERTIES
            return FieldSpec(
                name=self.name, type="structured", description=description, properties=properties, many=True
            )
        value = "integer" if self.number_kind == "count" else "number"
        return FieldSpec(name=self.name, type="structured", description=description, value=value)

    def property_type(self) -> str:
        """The graph type of this field as an Article property."""
        if self.type == "number":
            return "INT64" if self.number_kind == "count" else "DOUBLE"
        return "STRING"


class Eligibility(BaseModel):
    """Who decides what belongs in the review: criteria in plain words, and the reasons a reviewer
    gives when excluding a record (PRISMA's "records excluded, with reasons")."""

    model_config = ConfigDict(extra="forbid")

    inclusion: list[str] = Field(min_length=1)
    exclusion: list[str] = Field(default_factory=list)
    #: The reasons offered on the screening page; none given: the exclusion criteria, then "other".
    reasons: list[str] = Field(default_factory=list)
    #: The reasons offered at full-text screening; none given: those of title and abstract screening.
    fulltext_reasons: list[str] = Field(default_factory=list)

    @property
    def exclusion_reasons(self) -> list[str]:
        return _distinct_reasons(self.reasons or [*self.exclusion, "other"])

    @property
    def fulltext_exclusion_reasons(self) -> list[str]:
        return _distinct_reasons(self.fulltext_reasons) or self.exclusion_reasons


def _distinct_reasons(reasons: list[str]) -> list[str]:
    return list(dict.fromkeys(reason.strip() for reason in reasons if reason.strip()))


class Protocol(BaseModel):
    """A review protocol: named fields in file order, broader terms a question may use, saved reports."""

    model_config = ConfigDict(extra="forbid")

    name: str
    title: str = ""
    description: str = ""
    fields: list[ProtocolField]
    #: field -> broader term -> the canonical terms it covers.
    broader_terms: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    #: Saved Cypher reports of this protocol, ``config/reports/<name>.cypher``.
    reports: list[str] = Field(default_factory=list)
    #: Inclusion and exclusion criteria for title and abstract screening.
    eligibility: Eligibility | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Protocol:
        if not self.fields:
            raise ValueError("a protocol declares at least one field")
        if len(self.fields) > MAX_FIELDS:
            raise ValueError(
                f"{len(self.fields):,} fields; a protocol declares at most {MAX_FIELDS} (split the review's "
                "form into several protocols, or drop fields no question needs)"
            )
        labels: dict[str, str] = {}
        properties: dict[str, str] = {}
        for spec in self.fields:
            if spec.graph and spec.graph.node:
                if spec.graph.node in labels:
                    raise ValueError(f"fields {labels[spec.graph.node]} and {spec.name} both become {spec.graph.node}")
                labels[spec.graph.node] = spec.name
            if spec.graph and spec.graph.property:
                if spec.graph.property in properties:
                    raise ValueError(
                        f"fields {properties[spec.graph.property]} and {spec.name} both set "
                        f"Article.{spec.graph.property}"
                    )
                properties[spec.graph.property] = spec.name
        terms_fields = {spec.name for spec in self.fields if spec.type == "terms"}
        for field_name in self.broader_terms:
            if field_name not in terms_fields:
                raise ValueError(f"broader_terms: {field_name!r} is not a terms field of this protocol")
        return self

    def field(self, name: str) -> ProtocolField:
        return next(spec for spec in self.fields if spec.name == name)

    def extraction_fields(self) -> list[FieldSpec]:
        return [spec.extraction_spec() for spec in self.fields]

    def dictionary_files(self) -> dict[str, Path]:
        """field -> its synonym dictionary file."""
        directory = config_dir() / "dictionaries"
        return {spec.name: directory / f"{spec.dictionary}.yaml" for spec in self.fields if spec.dictionary}

    def dictionaries(self) -> dict[str, SynonymDictionary]:
        """field -> its synonym dictionary, built under the field's name whatever the file is called."""
        from hysem_assets.settings.dictionaries import build_dictionary, read_dictionary_file

        return {
            name: build_dictionary(name, read_dictionary_file(path)) for name, path in self.dictionary_files().items()
        }

    @cached_property
    def fingerprint(self) -> str:
        """Its name and a hash of what extraction reads: rows extracted under another one are stale
        (eligibility criteria steer screening, not extraction, and are left out)."""
        definition = self.model_dump(mode="json", exclude={"eligibility"})
        digest = hashlib.sha256(json.dumps(definition, sort_keys=True).encode())
        return f"{self.name}@{digest.hexdigest()[:12]}"

    def check_extracted(self, extracted: pd.DataFrame, partition: str) -> None:
        """Refuse rows extracted under another protocol (or another version of this one).

        Downstream assets call it, so switching a query's protocol never mixes stale
        values into terms, the graph or answers.
        """
        found = set(extracted["protocol"].dropna()) if "protocol" in extracted.columns else set()
        if len(extracted) and found != {self.fingerprint}:
            was = ", ".join(sorted(found)) or "no protocol (an older version)"
            raise StaleProtocolError(
                f"Partition {partition!r} was extracted with {was}, but its query now uses {self.fingerprint}. "
                f"Re-materialize extracted_fields and what depends on it: "
                f"hysem materialize --query {partition} --select 'extracted_fields*'"
            )


def protocols_dir() -> Path:
    return config_dir() / "protocols"


def read_protocol(path: Path) -> Protocol:
    """One protocol file, validated whole; dictionaries and reports it names must exist."""
    if not path.is_file():
        raise ProtocolError(f"Protocol file {path} does not exist; available: {available_protocols()}")
    try:
        document = read_yaml_mapping(path, "a review protocol: `fields:` and optional title, broader_terms, reports")
    except ConfigFileError as exc:
        raise ProtocolError(f"Protocol file {exc}") from exc
    data = document.data
    if not isinstance(data.get("fields"), dict):
        raise ProtocolError(f"Protocol file {path} must be a mapping with `fields:` (field name -> its definition)")
    fields = []
    for name, spec in data["fields"].items():
        try:
            fields.append(ProtocolField.model_validate({"name": name, **(spec if isinstance(spec, dict) else {})}))
        except ValidationError as exc:
            raise ProtocolError(f"Protocol file {path}, field {name!r}: {_reasons(exc)}") from exc
    try:
        protocol = Protocol.model_validate({**data, "name": path.stem, "fields": fields})
    except ValidationError as exc:
        raise ProtocolError(f"Protocol file {path}: {_reasons(exc)}") from exc
    for name, dictionary in protocol.dictionary_files().items():
        if not dictionary.is_file():
            raise ProtocolError(
                f"Protocol file {path}, field {name!r}: dictionary {dictionary.stem!r} does not exist "
                f"(expected {dictionary}); create it or remove `dictionary:`"
            )
    reports = config_dir() / "reports"
    for report in protocol.reports:
        if not (reports / f"{report}.cypher").is_file():
            raise ProtocolError(f"Protocol file {path}: report {report!r} does not exist ({reports}/{report}.cypher)")
    return protocol


def _reasons(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) + ': ' if error['loc'] else ''}{error['msg']}"
        for error in exc.errors()
    )


def available_protocols() -> list[str]:
    return sorted(path.stem for path in protocols_dir().glob("*.yaml"))


def load_protocol(name: str | None) -> Protocol:
    """The protocol called ``name`` (``generic`` when None)."""
    name = name or DEFAULT_PROTOCOL
    if not _NAME.match(name):
        raise ProtocolError(f"Protocol name {name!r} must be lower-case letters, digits, '-' or '_'")
    path = protocols_dir() / f"{name}.yaml"
    if not path.is_file():
        raise ProtocolError(f"No protocol {name!r} ({path} does not exist); available: {available_protocols()}")
    return read_protocol(path)


def load_protocols() -> dict[str, Protocol]:
    """Every protocol under config/protocols that loads (the graph schema is their union).

    One that does not is left out with a warning naming it: it blocks only the queries that use
    it (their runs stop at :func:`hysem_assets.settings.catalog.review_for`, before any asset), and ``hysem protocol
    check`` fails on it.
    """
    loaded = {}
    for name in available_protocols():
        try:
            loaded[name] = load_protocol(name)
        except ProtocolError as exc:
            log.warning(f"{exc} (queries that use protocol {name!r} cannot run until it is fixed)")
    return loaded
