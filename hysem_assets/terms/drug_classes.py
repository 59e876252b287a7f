"""Drug classes read from drug names: the stems of International Nonproprietary Names.

A reviewer asks about "statins" and a trial names "atorvastatin"; no spelling, synonym or
sentence vector joins the two reliably, but pharmacology names its drugs by class: the WHO's
INN programme gives each class a stem that its members' names end with ("-vastatin" for
HMG-CoA reductase inhibitors, "-pril" for ACE inhibitors, "-mab" for monoclonal antibodies).
This is vocabulary of drug naming, not of any review; only suffix stems long enough to be
specific are listed (a drug's name ends with its stem, a common English word almost never does).
"""

from __future__ import annotations

import re

from hysem_assets.core.matcher import fold, term_keys

#: Class names (singular, folded, as reviewers write them) -> the INN stems its members end with.
CLASS_STEMS: dict[str, tuple[str, ...]] = {
    "statin": ("vastatin",),
    "hmg-coa reductase inhibitor": ("vastatin",),
    "beta blocker": ("olol", "alol", "dilol"),
    "ace inhibitor": ("pril",),
    "angiotensin-converting enzyme inhibitor": ("pril",),
    "angiotensin receptor blocker": ("sartan",),
    "sartan": ("sartan",),
    "proton pump inhibitor": ("prazole",),
    "sglt2 inhibitor": ("gliflozin",),
    "gliflozin": ("gliflozin",),
    "dpp-4 inhibitor": ("gliptin",),
    "gliptin": ("gliptin",),
    "glp-1 receptor agonist": ("glutide", "enatide"),
    "fluoroquinolone": ("oxacin",),
    "quinolone": ("oxacin",),
    "penicillin": ("cillin",),
    "benzodiazepine": ("azepam", "azolam"),
    "tyrosine kinase inhibitor": ("tinib",),
    "monoclonal antibody": ("mab",),
    "calcium channel blocker": ("dipine",),
    "bisphosphonate": ("dronate",),
    "triptan": ("triptan",),
    "azole antifungal": ("conazole",),
    "h2 receptor antagonist": ("tidine",),
    "factor xa inhibitor": ("xaban",),
    "direct oral anticoagulant": ("xaban", "gatran"),
    "low molecular weight heparin": ("parin",),
    "heparin": ("parin",),
    "cox-2 inhibitor": ("coxib",),
    "coxib": ("coxib",),
    "glitazone": ("glitazone",),
    "thiazolidinedione": ("glitazone",),
}
_WORD = re.compile(r"[a-z0-9]+")
#: Every spelling key of a class name (plurals, hyphens and spaces aside) -> its stems.
_BY_KEY = {key: stems for name, stems in CLASS_STEMS.items() for key in term_keys(name)}


def class_stems(phrase: str) -> tuple[str, ...]:
    """The INN stems of the drug class ``phrase`` names ("statins" -> ("vastatin",)), else none."""
    return next((_BY_KEY[key] for key in term_keys(phrase) if key in _BY_KEY), ())


def names_member(text: str, stems: tuple[str, ...]) -> bool:
    """Whether a word of ``text`` is a drug name with one of ``stems`` ("atorvastatin" for "vastatin")."""
    return any(
        word.endswith(stem) and len(word) > len(stem) + 1
        for word in _WORD.findall(fold(text).casefold())
        for stem in stems
    )
