"""What an effect question asks: the intervention, the comparator when one is named, the outcome, and the
direction the question expects.

Reviewers ask for the effect of one thing on another in a few English shapes, those of the PICO
templates of evidence-based practice: "Do statins reduce the risk of dementia?", "What is the effect
of X on Y?", "How does X affect Y when compared with Z?", "Is X more effective than Y for Z?", "Are X
as effective in treating Y as Z?", "Is X associated with Y?", "Do X have a higher risk of Y than Z?",
"X versus Y for Z", each possibly opened by the population ("In adults with ..., does ...") or closed
by it ("... in older adults"). The patterns are English grammar and the framing words of outcomes
("the risk of", "levels", "a reduction in"), never a subject's words, so they read any review's
questions. A question in none of these shapes is not an effect question, and other routes answer it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from hysem_assets.findings.schema import DECREASED, INCREASED


@dataclass(frozen=True)
class EffectQuestion:
    """The parts of an effect question; ``direction`` is the one it asks about (a findings direction), if any."""

    intervention: str
    outcome: str
    comparator: str | None = None
    direction: str | None = None
    population: str | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """ "statins versus placebo on dementia": what the answer is about."""
        compared = f" versus {self.comparator}" if self.comparator else ""
        return f"{self.intervention}{compared} on {self.outcome}"


def _inflected(*bases: str) -> str:
    """An alternation of the verbs' forms (reduce, reduces, reduced, reducing), the first word of each inflected."""
    forms = []
    for base in bases:
        first, _, rest = base.partition(" ")
        if first.endswith("e"):
            stems = [first, first + "s", first + "d", first[:-1] + "ing"]
        elif first.endswith("y") and first[-2] not in "aeiou":
            stems = [first, first[:-1] + "ies", first[:-1] + "ied", first + "ing"]
        else:
            stems = [
                first,
                first + ("es" if first.endswith(("s", "sh", "ch", "x")) else "s"),
                first + "ed",
                first + "ing",
            ]
        forms += [f"{stem} {rest}".strip() for stem in stems]
    return "|".join(sorted(set(forms), key=len, reverse=True)).replace(" ", r"\s+")


#: Verbs of a question by the direction they ask about (None: any).
_VERBS: dict[str | None, str] = {
    DECREASED: _inflected(
        "reduce", "decrease", "lower", "lessen", "diminish", "attenuate", "mitigate", "alleviate", "relieve",
        "prevent", "protect against", "slow", "delay", "shorten", "suppress", "inhibit", "halve",
    )
    + r"|cut|cuts",
    INCREASED: _inflected(
        "increase", "raise", "elevate", "heighten", "worsen", "exacerbate", "aggravate", "accelerate", "promote",
        "cause", "induce", "trigger", "double", "prolong", "lengthen", "predispose to", "contribute to", "result in",
    )
    + r"|lead\s+to|leads\s+to|led\s+to",
    None: _inflected(
        "affect", "influence", "impact", "change", "alter", "modify", "improve", "benefit", "help", "treat",
        "relate to", "work for", "make a difference to", "make a difference in",
    )
    + r"|(?:have|has|had)\s+(?:an?\s+|any\s+|some\s+)?(?:\w+\s+)?(?:effects?|impacts?|influence|benefits?)\s+(?:on|for)",
}  # fmt: skip
_VERB = "|".join(f"(?P<verb_{n}>{verbs})" for n, verbs in enumerate(_VERBS.values()))
_AUX = r"(?:do|does|did|can|could|may|might|will|would|should|is|are|was|were|has|have|had)"
_COMPARED = r"(?:(?:when\s+)?compared\s+(?:with|to|against)|versus|vs\.?|relative\s+to|rather\s+than|instead\s+of)"
#: Where a clause may end: spaces, with a comma, colon or dash among them.
_GAP = r"\s*[,:;\u2013\u2014-]?\s+"
_COMPARATOR = rf"(?:{_GAP}{_COMPARED}\s+(?P<c>.+?))?"
#: A comparator named after the outcome ("How does X affect Y when compared with Z?").
_COMPARATOR_AFTER = _COMPARATOR.replace("<c>", "<c_after>")
_ROLE = r"(?:for|in|on|at|against|with\s+respect\s+to|regarding|in\s+terms\s+of|when\s+it\s+comes\s+to)"
_EFFECT_NOUN = r"(?:effects?|impacts?|influence|efficacy|effectiveness|benefits?|harms?|consequences?)"
_ADJECTIVES = r"(?P<adj>higher|lower|greater|smaller|increased|reduced|decreased|elevated|more|less|fewer)"

#: One pattern per shape of question, tried in order; each names ``i`` (intervention), ``o`` (outcome) and maybe
#: ``c`` (comparator).
_SHAPES = [re.compile(pattern, re.IGNORECASE) for pattern in (
    # Are oral antibiotics as effective in treating infection as intravenous antibiotics?
    rf"^{_AUX}\s+(?P<i>.+?)\s+(?P<cmp>as\s+(?:effective|good|efficacious|safe|useful))\s+{_ROLE}\s+(?P<o>.+?)"
    rf"\s+as\s+(?P<c>.+)$",
    # Is X more effective in reducing Z than Y? / Does X work better than Y for Z?
    rf"^{_AUX}\s+(?P<i>.+?)\s+(?:(?:work|perform|do)\s+)?(?P<cmp>better|worse|more\s+\w+|less\s+\w+|superior"
    rf"|inferior|safer)\s+{_ROLE}\s+(?P<o>.+?)\s+(?:than|to)\s+(?P<c>.+)$",
    rf"^{_AUX}\s+(?P<i>.+?)\s+(?:(?:work|perform|do)\s+)?(?P<cmp>better|worse|more\s+\w+|less\s+\w+|superior"
    rf"|inferior|safer)\s+(?:than|to)\s+(?P<c>.+?){_GAP}{_ROLE}\s+(?P<o>.+)$",
    # Do smokers have a higher risk of stroke than non-smokers?
    rf"^{_AUX}\s+(?P<i>.+?)\s+(?:have|has|had|show|shows|showed)\s+(?:an?\s+)?{_ADJECTIVES}\s+(?P<o>.+?)"
    rf"(?:\s+than\s+(?P<c>.+))?$",
    # Is X associated with / linked to / a risk factor for / effective in reducing Y?
    rf"^(?:is|are|was|were)\s+(?P<i>.+?){_COMPARATOR}\s+(?P<link>(?:positively\s+|negatively\s+|inversely\s+)?"
    rf"(?:associated|correlated)\s+with|linked\s+(?:to|with)|related\s+to|(?:an?\s+)?(?P<risk>risk|protective)\s+"
    rf"factors?\s+for|protective\s+against|(?:effective|efficacious|beneficial|useful|harmful|helpful)\s+{_ROLE})"
    rf"\s+(?P<o>.+)$",
    # What is the effect of X on Y? / To assess the effects of X compared with Y on Z.
    rf"^(?:(?:what|how\s+(?:large|big|strong|great))\s+(?:is|are|was|were)\s+(?:the\s+)?|(?:to\s+)?(?:assess|evaluate"
    rf"|determine|compare|estimate|quantify|describe|summari[sz]e)\s+the\s+|is\s+there\s+(?:an?\s+|any\s+)?)"
    rf"(?:\w+\s+){{0,2}}?{_EFFECT_NOUN}\s+of\s+(?P<i>.+?){_COMPARATOR}\s+{_ROLE}\s+(?P<o>.+)$",
    # What effect does X have on Y?
    rf"^(?:what|which)\s+(?:\w+\s+)?{_EFFECT_NOUN}\s+(?:does|do|did|has|have|had)\s+(?P<i>.+?)\s+(?:have|had)\s+"
    rf"(?:on|for)\s+(?P<o>.+)$",
    # Is there an association between X and Y?
    r"^(?:is\s+there|what\s+(?:is|are|was|were))\s+(?:an?\s+|any\s+|the\s+)?(?:\w+\s+)?(?:associations?"
    r"|relationships?|links?|correlations?)\s+between\s+(?P<i>.+?)\s+and\s+(?P<o>.+)$",
    # How does X compare with Y for Z?
    rf"^how\s+(?:does|do|did)\s+(?P<i>.+?)\s+compare\s+(?:with|to|against)\s+(?P<c>.+?){_GAP}{_ROLE}\s+(?P<o>.+)$",
    # How does X affect Y (when compared with Z)?
    rf"^how\s+(?:does|do|did|will|would|can|could|might|may)\s+(?P<i>.+?)\s+(?:{_VERB})\s+(?P<o>.+?){_COMPARATOR_AFTER}$",
    # Do statins (compared with placebo) reduce the risk of dementia? / Is there evidence that X reduces Y?
    rf"^(?:(?:is\s+there\s+(?:any\s+)?|what\s+(?:is\s+the\s+)?)evidence\s+(?:that|whether)|{_AUX})\s+(?P<i>.+?)"
    rf"{_COMPARATOR}\s+(?:(?:really|actually|significantly|also)\s+)?(?:{_VERB})\s+(?P<o>.+?){_COMPARATOR_AFTER}$",
    # Which is better for Z: X or Y?
    rf"^which\s+(?:is|works|was)\s+(?:better|more\s+\w+|safer|superior)\s+{_ROLE}\s+(?P<o>.+?)\s*[,:]\s*"
    rf"(?P<i>.+?)\s+or\s+(?P<c>.+)$",
    # X versus Y for Z
    rf"^(?P<i>(?!(?:what|which|how|why|when|where|who|list|show|compare|count)\b).+?)\s+{_COMPARED}\s+(?P<c>.+?)"
    rf"{_GAP}{_ROLE}\s+(?P<o>.+)$",
)]  # fmt: skip

#: "In adults with type 2 diabetes, does ...": the population named before the question.
_POPULATION_FIRST = re.compile(r"^(?:in|among|for)\s+(?P<population>[^,]{3,}?),\s*(?P<rest>.+)$", re.IGNORECASE)
#: Where the outcome ends and the population or time frame after it begins ("... in older adults", "at 12 months").
_OUTCOME_END = re.compile(
    r"\s+(?:(?:in|among)\s+(?=\S)|(?:at|over|after|within|during|by)\s+(?=\d|one\b|two\b|three\b|five\b|ten\b))",
    re.IGNORECASE,
)
_ARTICLE = r"(?:the|a|an|any)\s+"
#: Words that frame an outcome ("the risk of dementia", "a reduction in HbA1c"); change words ask a direction.
_OUTCOME_FRAME = re.compile(
    rf"^(?:{_ARTICLE})?(?:(?:risk|incidence|odds|rates?|likelihood|chances?|probability|occurrence|prevalence|onset"
    r"|development|levels?|concentrations?|severity|number|frequency|burden|progression|treatment|management"
    r"|control)\s+(?:of|for)\s+"
    r"|(?P<down>(?:reductions?|decreases?|declines?|prevention)\s+(?:in|of)\s+|(?:reducing|lowering"
    r"|preventing|decreasing|slowing|delaying)\s+)|(?P<up>(?:increases?|rises?|worsening)\s+(?:in|of)\s+"
    r"|(?:increasing|raising|causing)\s+)|(?:improvements?|changes?|differences?)\s+(?:in|of)\s+"
    r"|(?:improving|treating|managing|controlling|achieving)\s+"
    r"|(?P<adj_down>reduced|lower|decreased|fewer|less)\s+|(?P<adj_up>increased|higher|greater|elevated|more)\s+)",
    re.IGNORECASE,
)
#: Words that only say how an outcome is measured or that it is one ("dementia risk", "HbA1c levels",
#: "cardiovascular outcomes": any cardiovascular outcome), dropped from its end.
_OUTCOME_TAIL = re.compile(
    r"\s+(?:risk|incidence|rates|levels?|concentrations?|scores?|outcomes?|endpoints?|end\s+points?)$", re.IGNORECASE
)
#: Words that frame an intervention ("the use of X", "treatment with X", "long-term exposure to X", "statin use").
_INTERVENTION_FRAME = re.compile(
    rf"^(?:{_ARTICLE})?(?:(?:long|short)[- ]term\s+|regular\s+|daily\s+)?(?:(?:use|usage|intake|consumption"
    r"|administration|presence|addition|prescription|effects?)\s+of\s+|(?:treatment|therapy|supplementation"
    r"|exposure|adherence|pretreatment)\s+(?:with|to)\s+|(?:taking|using|receiving|exposure\s+to)\s+)",
    re.IGNORECASE,
)
_INTERVENTION_TAIL = re.compile(
    r"\s+(?:use|usage|intake|consumption|exposure|supplementation|administration)$", re.IGNORECASE
)
_LEADING_ARTICLE = re.compile(rf"^{_ARTICLE}", re.IGNORECASE)
#: An outcome that starts with one of these is no outcome ("increase in recent years", "change with exposure").
_NOT_AN_OUTCOME = re.compile(
    r"^(?:with|in|over|across|by|from|when|since|during|between|after|before|than|as|to|it|this|that|them|they"
    r"|those|these|over\s+time)\b",
    re.IGNORECASE,
)


def _stripped(text: str | None, frame: re.Pattern[str], tail: re.Pattern[str]) -> tuple[str, dict[str, str]]:
    """``text`` without its framing words (leading, repeatedly, then trailing), and the frame groups that matched."""
    text = (text or "").strip(" ,;:.?!\"'")
    said: dict[str, str] = {}
    while (match := frame.match(text)) and match.end() < len(text):
        said |= {name: value for name, value in match.groupdict().items() if value}
        text = text[match.end() :]
    if (end := tail.search(text)) and end.start() > 0:
        text = text[: end.start()]
    return text.strip(" ,;:.?!\"'"), said


def _outcome(text: str) -> tuple[str, str | None, str | None]:
    """The outcome, the population or time frame after it, and the direction its frame words ask about."""
    outcome, said = _stripped(text, _OUTCOME_FRAME, _OUTCOME_TAIL)
    population = None
    if (end := _OUTCOME_END.search(outcome)) and end.start() > 0:
        outcome, population = outcome[: end.start()], outcome[end.end() :]
        outcome, more = _stripped(outcome, _OUTCOME_FRAME, _OUTCOME_TAIL)
        said |= more
    direction = DECREASED if {"down", "adj_down"} & set(said) else INCREASED if {"up", "adj_up"} & set(said) else None
    return _LEADING_ARTICLE.sub("", outcome), population, direction


def _verb_direction(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    for n, direction in enumerate(_VERBS):
        if groups.get(f"verb_{n}"):
            return direction
    adjective = (groups.get("adj") or "").casefold()
    if adjective in ("higher", "greater", "increased", "elevated", "more") or groups.get("risk", "") == "risk":
        return INCREASED
    if adjective in ("lower", "smaller", "reduced", "decreased", "less", "fewer") or groups.get("risk") == "protective":
        return DECREASED
    return DECREASED if (groups.get("link") or "").casefold().startswith("protective") else None


def effect_question(question: str) -> EffectQuestion | None:
    """The parts of ``question`` when it asks for the effect of something on an outcome, else None."""
    text = " ".join(question.split()).rstrip(" ?.!")
    population = None
    if first := _POPULATION_FIRST.match(text):
        population, text = first.group("population"), first.group("rest")
    for shape in _SHAPES:
        match = shape.match(text)
        if match is None or _NOT_AN_OUTCOME.match(match.group("o")):
            continue
        intervention, _ = _stripped(match.group("i"), _INTERVENTION_FRAME, _INTERVENTION_TAIL)
        named = match.groupdict()
        comparator = _LEADING_ARTICLE.sub("", (named.get("c") or named.get("c_after") or "").strip(" ,;:.")) or None
        outcome, after, framed = _outcome(match.group("o"))
        if not intervention or not outcome or _NOT_AN_OUTCOME.match(outcome):
            continue
        return EffectQuestion(
            intervention=intervention,
            outcome=outcome,
            comparator=comparator,
            direction=_verb_direction(match) or framed,
            population=population or after,
        )
    return None
