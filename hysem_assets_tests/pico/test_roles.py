"""From tagged spans to participants, interventions, comparators and outcomes."""

import re

import pytest

from hysem_assets.pico.roles import cleaned, comparator_spans, control_mentions, role_values
from hysem_assets.pico.tagger import Span


def tagged(text: str, marks: dict[str, list[str]]) -> list[Span]:
    """Spans of ``text``: every occurrence of each marked phrase, with its label."""
    spans = [
        Span(label, m.start(), m.end(), m.group(), 0.9)
        for label, phrases in marks.items()
        for phrase in phrases
        for m in re.finditer(re.escape(phrase), text)
    ]
    return sorted(spans, key=lambda s: s.start)


TEXT = (
    "Ginger versus metoclopramide for nausea in pregnant women. "
    "We randomised 120 pregnant women in their first trimester to ginger or metoclopramide. "
    "The primary outcome was the nausea score; vomiting episodes were secondary."
)


def test_the_second_arm_of_a_versus_b_is_the_comparator() -> None:
    spans = tagged(
        TEXT,
        {
            "interventions": ["Ginger", "metoclopramide", "ginger"],
            "participants": ["pregnant women", "120 pregnant women in their first trimester"],
            "outcomes": ["nausea", "nausea score", "vomiting episodes"],
        },
    )
    values = role_values(TEXT, spans)
    assert values["interventions"] == ["Ginger"]  # one spelling, case aside
    assert values["comparators"] == ["metoclopramide"]
    assert values["participants"][0] == "120 pregnant women in their first trimester"  # the fullest first
    assert set(values["participants"]) == {"120 pregnant women in their first trimester", "pregnant women"}
    assert values["outcomes"] == ["nausea", "nausea score", "vomiting episodes"]


def test_control_conditions_are_comparators_wherever_they_stand() -> None:
    text = "Placebo-controlled trial. Patients received vitamin D3 or a matching placebo; usual care continued."
    spans = tagged(text, {"interventions": ["vitamin D3", "a matching placebo", "usual care"]})
    interventions = [s for s in spans if s.label == "interventions"]
    assert comparator_spans(text, interventions) == {1, 2}
    values = role_values(text, spans)
    assert values == {
        "participants": [],
        "interventions": ["vitamin D3"],
        "comparators": ["matching placebo", "usual care"],
        "outcomes": [],
    }


def test_pragmatic_and_observational_controls_named_outside_the_spans_are_comparators() -> None:
    text = "Statin users were compared with non-users. KB220 was compared to treatment as usual; vs no exposure."
    spans = tagged(text, {"interventions": ["Statin users", "KB220"]})
    assert role_values(text, spans)["comparators"] == ["non-users", "treatment as usual", "no exposure"]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Patients were randomised to intervention or control (n = 20 each).", ["control"]),
        ("Compared with healthy controls, patients had lower scores.", ["healthy controls"]),
        ("Controls were younger than cases.", ["Controls"]),
        (
            "The control group received saline; vehicle-treated mice gained weight.",
            ["control group", "vehicle-treated"],
        ),
        ("Four treatments in random order: control, saline, and two doses.", ["control"]),
        ("A disease management program was compared with usual practice.", ["usual practice"]),
        (
            "Random allocation was to usual medical care or therapy; 87 to usual treatment alone.",
            ["usual medical care", "usual treatment"],
        ),
        ("Clinicians were randomized to standard practice control.", ["standard practice"]),
        ("The rate was compared to the pre-intervention period.", ["pre-intervention period"]),
        ("Patients reported their usual source of care and the preintervention rate.", []),
        ("Glycaemic control improved, as did infection control and pain control.", []),
        ("We adjusted to control for confounding under the control of the board.", []),
        ("Motor vehicle crashes rose; the kinase controls tumour growth in population control areas.", []),
        # untreated and unexposed as arms, not as a state of a condition or a population
        (
            "Untreated patients with reflux, treatment-as-usual patients and the unexposed group were compared.",
            ["Untreated", "treatment-as-usual", "unexposed"],
        ),
        ("Motility of untreated, frozen and thawed cells.", ["untreated"]),
        ("Untreated depression and untreated HIV infection affect HIV-unexposed infants.", []),
    ],
)
def test_control_names_an_arm_not_an_object_of_controlling(text: str, named: list[str]) -> None:
    assert control_mentions(text) == named


def test_a_span_is_a_control_arm_with_the_word_after_it() -> None:
    text = "Eyes in the autologous serum control group had drops. Rhythm control kept a sinus rhythm."
    spans = tagged(text, {"interventions": ["autologous serum control", "Rhythm control"]})
    assert comparator_spans(text, spans) == {0}


def test_no_value_opens_or_ends_on_a_function_word() -> None:
    text = "Among 40 university students and (in part) their parents in Oslo, the risk of death fell."
    marks = {
        "participants": ["Among 40 university students and (in part) their parents in", "parents in Oslo"],
        "outcomes": ["the risk of", "of death"],
    }
    values = role_values(text, tagged(text, marks))
    assert values["participants"] == ["40 university students and (in part) their parents", "parents in Oslo"]
    assert values["outcomes"] == ["risk", "death"]
    assert role_values("of", tagged("of", {"participants": ["of"]}))["participants"] == []  # nothing else: no value


def test_the_main_population_is_the_surest_phrase() -> None:
    """The first participant value is the span the tagger is surest of, not the longest: a longer, less sure
    span is often a clause around the participants; a span that makes no value never leads."""
    text = (
        "Requests by patients with depressive symptoms. So physicians saw 1 SP with major depression and 1 with "
        "adjustment disorder, and they were seen again."
    )

    def span(phrase: str, score: float) -> Span:
        start = text.index(phrase)
        return Span("participants", start, start + len(phrase), phrase, score)

    sure = span("patients with depressive symptoms", 0.93)
    clause = span("So physicians saw 1 SP with major depression and 1 with adjustment disorder,", 0.71)
    empty = span("they were", 0.99)
    assert role_values(text, [sure, clause, empty])["participants"] == [sure.text, clause.text[:-1]]
    sentence = Span("participants", 0, len(text), text, 0.99)  # more words than a description has
    assert role_values(text, [sure, sentence])["participants"][0] == sure.text


def test_a_span_begun_inside_a_word_starts_with_the_word() -> None:
    """The tagger may start a span after an apostrophe or a hyphen; a value starts where its word does."""
    text = (
        "The children's behaviour and 24-h pH-metry were read, with Kaplan-Meier survival; the ‘asthma "
        "epidemic’, local clinics. Patients:HIV-infected women, and a dose-"
    )

    def span(phrase: str, label: str = "outcomes") -> Span:
        start = text.index(phrase)
        return Span(label, start, start + len(phrase), phrase, 0.9)

    tagged_parts = [span("s behaviour"), span("h pH-metry"), span("-Meier survival"), span("-")]
    assert role_values(text, tagged_parts)["outcomes"] == [
        "children's behaviour",
        "24-h pH-metry",
        "Kaplan-Meier survival",
    ]
    others = [span(", local clinics", "participants"), span("HIV-infected women", "participants")]
    assert set(role_values(text, others)["participants"]) == {"HIV-infected women", "local clinics"}


def test_a_function_word_in_a_hyphenated_compound_stays() -> None:
    text = "At-risk inpatients had on-demand therapy after a placebo run-in; intention-to-treat rates of in-hospital death."
    marks = {
        "participants": ["At-risk inpatients"],
        "interventions": ["on-demand therapy", "placebo run-in"],
        "outcomes": ["intention-to", "in-hospital death"],
    }
    values = role_values(text, tagged(text, marks))
    assert values["participants"] == ["At-risk inpatients"]
    assert values["interventions"] + values["comparators"] == ["on-demand therapy", "placebo run-in"]
    assert values["outcomes"] == ["intention", "in-hospital death"]  # a compound the tagger cut loses its stump


def test_a_structure_label_is_no_value() -> None:
    text = (
        "Exercise for asthma\n\nBACKGROUND: Asthma limits exercise. PARTICIPANTS: 120 adults with asthma. "
        "Interventions  Supervised exercise classes. Results: Fewer attacks."
    )
    marks = {
        "participants": ["BACKGROUND", "PARTICIPANTS: 120 adults with asthma"],
        "interventions": ["Interventions  Supervised exercise classes"],
        "outcomes": ["Results"],
    }
    values = role_values(text, tagged(text, marks))
    assert values["participants"] == ["120 adults with asthma"]
    assert values["interventions"] == ["Supervised exercise classes"]
    assert values["outcomes"] == []


def test_a_label_glued_to_its_sentence_is_no_value_either() -> None:
    text = "Point-of-care testing in Africa.  BackgroundThe Xpert MTB/RIF test is rolled out."
    values = role_values(text, tagged(text, {"interventions": ["BackgroundThe Xpert MTB/RIF test"]}))
    assert values["interventions"] == ["Xpert MTB/RIF test"]


def test_a_comparator_cut_inside_a_control_condition_is_the_whole_condition() -> None:
    text = "Pain fell with exercise compared with usual care, and with yoga versus a control group."
    spans = tagged(text, {"interventions": ["exercise", "care", "yoga", "control"]})
    assert role_values(text, spans)["comparators"] == ["usual care", "control"]


def test_a_control_condition_given_with_an_intervention_is_an_arm_of_its_own() -> None:
    text = (
        "We compared quality improvement interventions with usual practice. "
        "Patients were randomized to bupropion SR and placebo. Others had CBT plus usual-care."
    )
    marks = {
        "interventions": [
            "quality improvement interventions with usual practice",
            "bupropion SR and placebo",
            "CBT plus usual-care",
        ]
    }
    values = role_values(text, tagged(text, marks))
    assert values["interventions"] == ["quality improvement interventions", "bupropion SR", "CBT"]
    assert values["comparators"] == ["usual practice", "placebo", "usual-care"]


def test_an_intervention_in_another_sentence_is_no_second_arm() -> None:
    text = "Exercise was offered. Versus the literature, diet was also studied."
    spans = tagged(text, {"interventions": ["Exercise", "diet"]})
    assert comparator_spans(text, spans) == set()


@pytest.mark.parametrize(
    ("span", "value"),
    [
        (" the children aged 6-12 years ,", "children aged 6-12 years"),
        ("(n = 45 adults", "n = 45 adults"),
        ("asthma (moderate)", "asthma (moderate)"),
        ("asthma (moderate", "asthma"),
        ("sex), smoking status and fasting", "smoking status and fasting"),
        ("weight [kg]), height", "height"),
        ("., ;", ""),
        ("12", ""),
        ("mean", ""),
        ("the Intervention", ""),
        ("mean change in weight", "mean change in weight"),
    ],
)
def test_values_are_readable_phrases(span: str, value: str) -> None:
    assert cleaned(span) == value


def test_a_class_no_word_is_sure_of_has_no_values() -> None:
    """Low thresholds widen and add spans where a class is present, not in a text where nothing is sure of it."""
    text = "Magnetic studies of a flavocytochrome. EPR spectra were recorded below 45 K in the subunit."
    unsure = [Span("outcomes", 39, 42, "EPR", 0.3, peak=0.4), Span("participants", 83, 90, "subunit", 0.6)]
    values = role_values(text, unsure)
    assert values["outcomes"] == [] and values["participants"] == ["subunit"]
    sure_elsewhere = [*unsure, Span("outcomes", 43, 50, "spectra", 0.45, peak=0.7)]
    assert role_values(text, sure_elsewhere)["outcomes"] == ["EPR", "spectra"]


def test_a_span_cut_inside_a_bracket_is_still_a_piece_of_its_text() -> None:
    """A value is scored, searched and cited by finding it in its text: a span the tagger began or ended
    inside a bracket keeps the side outside the bracket instead of losing the bracket to a space."""
    text = (
        "Strains made glucosylated enterobactin (also termed salmochelin), aerobactin and yersiniabactin. "
        "Blood lactate-related thresholds (BLRTs) were measured in 2 (of 3) cohorts."
    )
    marks = {
        "interventions": ["salmochelin), aerobactin", "Blood lactate-related thresholds (BLRTs"],
        "outcomes": ["2 (of 3) cohorts"],
    }
    values = role_values(text, tagged(text, marks))
    assert values["interventions"] == ["aerobactin", "Blood lactate-related thresholds"]
    assert all(value in text for role in values.values() for value in role)


def test_a_comparator_named_by_an_adjective_is_its_arm() -> None:
    text = "A placebo-controlled trial of sertraline. Sertraline and vehicle-treated rats were compared."
    spans = tagged(text, {"interventions": ["placebo-controlled", "sertraline", "Sertraline"]})
    assert role_values(text, spans)["comparators"] == ["placebo"]
    assert role_values(text, tagged(text, {"interventions": ["Sertraline"]}))["comparators"] == ["placebo", "vehicle"]


@pytest.mark.parametrize(
    ("text", "arms", "comparators"),
    [
        ("Drug A gave better control vs. drug B in adults.", ["Drug A", "drug B"], {1}),
        ("Eye drops of 0.25% apraclonidine vs 0.5% timolol.", ["apraclonidine", "timolol"], {1}),
        (
            "A study of clozapine and risperidone. Scores fell more with clozapine than in the risperidone group.",
            ["clozapine", "risperidone"],
            {1, 3},
        ),
        ("Effects of yoga and diet. Yoga and diet both lowered weight.", ["yoga", "diet", "Yoga"], set()),
        ("A comparison of lansoprazole and ranitidine in oesophagitis.", ["lansoprazole", "ranitidine"], {1}),
        ("A crossover study comparing a 1-mg tablet with an oral solution.", ["1-mg tablet", "oral solution"], {1}),
        ("We compared the safety of drug A, drug B and drug C.", ["drug A", "drug B", "drug C"], {1, 2}),
        ("Comparative efficacy of exercise and diet in obesity.", ["exercise", "diet"], {1}),
        ("Compared with earlier work, yoga and diet lowered weight.", ["yoga", "diet"], set()),
        ("Yoga was given with diet; scores were compared.", ["Yoga", "diet"], set()),
    ],
)
def test_the_second_arm_is_found_past_abbreviations_decimals_and_listed_arms(
    text: str, arms: list[str], comparators: set[int]
) -> None:
    """An arm first listed beside another ("A and B") is decided where it is next named, unless a comparing
    word stands just before the pair ("a comparison of A and B")."""
    assert comparator_spans(text, tagged(text, {"interventions": arms})) == comparators
