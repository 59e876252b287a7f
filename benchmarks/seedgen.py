"""Seeded generator of a seed-scale snapshot for ``benchmarks/seed_scale.py``.

A snapshot folder in exactly the layout the local mirror serves (``hysem_assets.mirror``):
PubMed efetch XML, OpenAlex works, Scopus search entries, Crossref messages, one Unpaywall
object per DOI, open-access PDFs under ``files/``, a ``harvest.yaml`` with the query per
source and a ``truth.json`` saying which records are one work. It is rendered by the same
code that renders the bundled snapshots (``scripts/build_sample.py`` and the page layout of
``scripts/build_sample_pdfs.py``): this module only invents the works, in the form of a
bundled ``articles.yaml``, so the API formats never drift apart.

At scale 1 (``SeedSpec()``): 2,000 works, 3,400 source records (PubMed 1,400, OpenAlex
1,300, Scopus 700; 300 works in all three sources, 800 in two, 900 in one) and 1,000 works
with an open-access PDF of 10-15 pages (numbered sections, paragraphs, two or three tables,
a reference list of 25-45 entries). The subject is deliberately broad: twelve clinical
domains (cardiometabolic, oncology, mental health...), each with its own exposures,
outcomes, mechanisms and journals, and designs from trials to Mendelian randomisation, so
the topic, term and extraction stages meet a varied vocabulary. Sources disagree the way real
exports do: a DOI missing from one source or spelled in upper case, author names without
diacritics in Scopus, a title in American spelling or title case, an abstract Scopus lacks;
about 7% of works have no DOI at all. Every work is fictional (DOIs under the ``10.5555``
test prefix).

Everything is drawn from ``random.Random`` seeded by the spec's seed and each work's index,
so one seed always gives the same folder, and adding the increment (``SeedSpec.increment``:
50 new records at scale 1, new works across the sources, a few with PDFs) leaves every
earlier work unchanged. Rendering runs at about 0.3 s per PDF per process: the full 1,000
PDFs take about three minutes on two cores, the metadata half a minute.

    python benchmarks/seed_scale.py --generate-only --scale 0.05 --keep DIR   # the snapshot alone, in DIR/snapshot

    import seedgen                                  # with benchmarks/ on sys.path
    stats = seedgen.write_snapshot(Path("snap"), seedgen.SeedSpec(scale=0.05), workers=2)
    added = seedgen.add_increment(Path("snap"), seedgen.SeedSpec(scale=0.05), workers=2)
"""

from __future__ import annotations

import html
import io
import json
import math
import multiprocessing
import random
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
if str(SCRIPTS) not in sys.path:  # the bundled snapshots' renderers: build_sample(_pdfs).py
    sys.path.insert(0, str(SCRIPTS))

import build_sample as bs  # noqa: E402

SOURCES = ("pubmed", "openalex", "scopus")
SLUG = "seed-scale"
GENERATOR_VERSION = 1

#: Works per combination of sources at scale 1: 2,000 works, 3,400 records.
CATEGORIES: dict[tuple[str, ...], int] = {
    ("pubmed", "openalex", "scopus"): 300,
    ("pubmed", "openalex"): 450,
    ("pubmed", "scopus"): 200,
    ("openalex", "scopus"): 150,
    ("pubmed",): 450,
    ("openalex",): 400,
    ("scopus",): 50,
}
#: Source combinations of the increment's new works, in the order they are drawn.
INCREMENT_CYCLE: tuple[tuple[str, ...], ...] = (
    ("pubmed", "openalex", "scopus"),
    ("pubmed", "openalex"),
    ("pubmed",),
    ("openalex",),
    ("pubmed", "scopus"),
    ("pubmed", "openalex", "scopus"),
    ("openalex", "scopus"),
    ("pubmed", "openalex"),
    ("scopus",),
)
PDFS_AT_SCALE_1 = 1000
INCREMENT_RECORDS_AT_SCALE_1 = 50

#: The benchmark's search, per source; every generated record matches it by evaluation, and
#: harvest.yaml also makes the mirror replay the folder for it, as a recording would.
QUERY: dict[str, str] = {
    "pubmed": (
        "(risk*[tiab] OR incidence[tiab] OR association*[tiab]) AND (adult*[tiab] OR patient*[tiab] "
        "OR participant*[tiab] OR women[tiab] OR men[tiab] OR children[tiab] OR people[tiab])"
    ),
    "openalex": (
        "(risk OR incidence OR association) AND (adults OR patients OR participants OR women OR men "
        "OR children OR people)"
    ),
    "scopus": (
        "TITLE-ABS-KEY((risk* OR incidence OR association*) AND (adult* OR patient* OR participant* "
        "OR women OR men OR children OR people))"
    ),
}


# ----------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class SeedSpec:
    """Size and seed of a generated snapshot; ``scale`` shrinks every count proportionally."""

    scale: float = 1.0
    seed: int = 7

    def categories(self) -> dict[tuple[str, ...], int]:
        return {combo: max(1, round(count * self.scale)) for combo, count in CATEGORIES.items()}

    @property
    def works(self) -> int:
        return sum(self.categories().values())

    @property
    def records(self) -> dict[str, int]:
        return {s: sum(n for combo, n in self.categories().items() if s in combo) for s in SOURCES}

    @property
    def pdfs(self) -> int:
        return max(1, round(PDFS_AT_SCALE_1 * self.scale))

    @property
    def increment_records(self) -> int:
        return max(5, round(INCREMENT_RECORDS_AT_SCALE_1 * self.scale))

    def increment(self) -> list[tuple[str, ...]]:
        """Source combinations of the new works, drawn in a fixed cycle until the record count is reached."""
        combos: list[tuple[str, ...]] = []
        total = 0
        while total < self.increment_records:
            combo = INCREMENT_CYCLE[len(combos) % len(INCREMENT_CYCLE)]
            if total + len(combo) > self.increment_records:
                combo = combo[: self.increment_records - total]
            combos.append(combo)
            total += len(combo)
        return combos


# ----------------------------------------------------------------------------- vocabulary


@dataclass(frozen=True)
class Domain:
    key: str
    name: str
    exposures: tuple[str, ...]
    outcomes: tuple[str, ...]
    populations: tuple[str, ...]
    mechanisms: tuple[str, ...]
    measures: tuple[str, ...]  # continuous measurements, for tables and mean differences
    mesh: tuple[str, ...]
    journal_words: tuple[str, ...]


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "cardio",
        "cardiometabolic medicine",
        ("metformin use", "SGLT2 inhibitor therapy", "sodium intake", "daily step count", "statin therapy",
         "sugar-sweetened beverage consumption", "shift work", "resting heart rate", "low-dose aspirin"),
        ("atrial fibrillation", "heart failure hospitalisation", "myocardial infarction", "type 2 diabetes",
         "ischaemic stroke", "hypertension", "cardiovascular mortality", "peripheral artery disease"),
        ("adults with type 2 diabetes", "middle-aged adults without cardiovascular disease",
         "patients after myocardial infarction", "older adults with hypertension", "women aged 40 to 69 years"),
        ("insulin resistance", "endothelial dysfunction", "arterial stiffness", "visceral adiposity",
         "low-grade inflammation", "sympathetic activation", "left ventricular hypertrophy", "dyslipidaemia",
         "glycated haemoglobin", "renin-angiotensin signalling"),
        ("systolic blood pressure", "HbA1c", "LDL cholesterol", "body mass index", "waist circumference"),
        ("Diabetes Mellitus, Type 2", "Atrial Fibrillation", "Heart Failure", "Hypertension", "Metformin",
         "Myocardial Infarction", "Stroke"),
        ("Cardiometabolic", "Cardiovascular", "Heart", "Vascular"),
    ),
    Domain(
        "onco",
        "cancer epidemiology",
        ("alcohol consumption", "red meat intake", "menopausal hormone therapy", "night shift work",
         "vitamin D supplementation", "proton pump inhibitor use", "leisure-time physical activity",
         "long-term aspirin use", "tobacco smoking"),
        ("colorectal cancer", "breast cancer", "hepatocellular carcinoma", "lung cancer", "prostate cancer",
         "pancreatic cancer", "cancer-specific mortality", "gastric cancer"),
        ("postmenopausal women", "adults attending colorectal screening", "patients with chronic hepatitis B",
         "men aged 50 years or older", "cancer survivors"),
        ("DNA methylation", "oestrogen receptor signalling", "chronic mucosal inflammation", "tumour microenvironment",
         "bile acid metabolism", "oxidative DNA damage", "gut microbiota", "insulin-like growth factor",
         "somatic mutation burden"),
        ("tumour size", "serum CEA", "Ki-67 index", "body mass index", "circulating IGF-1"),
        ("Colorectal Neoplasms", "Breast Neoplasms", "Carcinoma, Hepatocellular", "Lung Neoplasms",
         "Prostatic Neoplasms", "Alcohol Drinking"),
        ("Oncology", "Cancer", "Tumour", "Carcinogenesis"),
    ),
    Domain(
        "mental",
        "psychiatry and mental health",
        ("social media use", "loneliness", "antidepressant treatment", "childhood adversity", "green space exposure",
         "cognitive behavioural therapy", "unemployment", "cannabis use", "sleep duration"),
        ("major depressive disorder", "anxiety disorders", "suicidal ideation", "psychotic episodes", "self-harm",
         "post-traumatic stress disorder", "burnout", "bipolar disorder relapse"),
        ("adolescents aged 12 to 17 years", "young adults in higher education",
         "patients with first-episode psychosis", "people living with chronic pain", "health-care workers"),
        ("hypothalamic-pituitary-adrenal axis", "neuroinflammation", "reward processing", "rumination",
         "circadian disruption", "social support", "emotion regulation", "serotonergic signalling",
         "stress reactivity"),
        ("PHQ-9 score", "GAD-7 score", "hours of sleep", "perceived stress score", "cortisol awakening response"),
        ("Depressive Disorder, Major", "Anxiety Disorders", "Suicidal Ideation", "Loneliness", "Sleep"),
        ("Psychiatry", "Mental Health", "Mood Disorders", "Behavioural Medicine"),
    ),
    Domain(
        "neuro",
        "neurology",
        ("hearing aid use", "anticholinergic drug burden", "bilingualism", "traumatic brain injury", "midlife obesity",
         "blood pressure lowering", "Mediterranean diet adherence", "air travel noise", "benzodiazepine use"),
        ("dementia", "Parkinson's disease", "multiple sclerosis relapse", "epilepsy", "migraine", "cognitive decline",
         "amyotrophic lateral sclerosis", "Alzheimer's disease"),
        ("community-dwelling older adults", "patients with relapsing multiple sclerosis",
         "adults aged 60 years or older", "people with mild cognitive impairment", "veterans with head injury"),
        ("amyloid deposition", "white matter hyperintensities", "synaptic plasticity", "cerebral small vessel disease",
         "alpha-synuclein aggregation", "blood-brain barrier permeability", "cognitive reserve",
         "microglial activation", "demyelination"),
        ("MMSE score", "hippocampal volume", "EDSS score", "gait speed", "serum neurofilament light"),
        ("Dementia", "Parkinson Disease", "Multiple Sclerosis", "Cognitive Dysfunction", "Epilepsy"),
        ("Neurology", "Brain", "Neurodegeneration", "Cognitive"),
    ),
    Domain(
        "renal",
        "nephrology",
        ("NSAID use", "dietary protein intake", "hyperuricaemia", "iodinated contrast exposure",
         "finerenone treatment", "home haemodialysis", "potassium binder therapy", "intensive glucose control",
         "serum bicarbonate"),
        ("chronic kidney disease progression", "acute kidney injury", "end-stage kidney disease",
         "kidney transplant failure", "albuminuria", "dialysis initiation", "hyperkalaemia", "renal mortality"),
        ("patients with stage 3 chronic kidney disease", "kidney transplant recipients",
         "adults undergoing coronary angiography", "patients receiving maintenance haemodialysis",
         "older adults with reduced eGFR"),
        ("glomerular hyperfiltration", "tubular injury", "mineralocorticoid receptor activation", "renal fibrosis",
         "podocyte loss", "uraemic toxins", "vascular calcification", "acid-base balance"),
        ("eGFR", "urine albumin-creatinine ratio", "serum potassium", "serum phosphate", "haemoglobin"),
        ("Renal Insufficiency, Chronic", "Acute Kidney Injury", "Kidney Transplantation", "Renal Dialysis"),
        ("Nephrology", "Kidney", "Renal", "Dialysis"),
    ),
    Domain(
        "infect",
        "infectious diseases",
        ("influenza vaccination", "antibiotic prophylaxis", "hand hygiene promotion", "household crowding",
         "HIV pre-exposure prophylaxis", "corticosteroid therapy", "travel to endemic areas", "BCG vaccination",
         "catheter use"),
        ("community-acquired pneumonia", "sepsis", "tuberculosis", "urinary tract infection",
         "surgical site infection", "COVID-19 hospitalisation", "HIV acquisition",
         "Clostridioides difficile infection"),
        ("nursing home residents", "children under five years", "patients admitted to intensive care",
         "men who have sex with men", "adults undergoing elective surgery"),
        ("antimicrobial resistance", "herd immunity", "innate immune response", "viral shedding", "biofilm formation",
         "colonisation pressure", "antibody waning", "cytokine storm"),
        ("C-reactive protein", "procalcitonin", "length of stay", "viral load", "CD4 count"),
        ("Pneumonia", "Sepsis", "Tuberculosis", "Influenza Vaccines", "Urinary Tract Infections"),
        ("Infection", "Infectious Diseases", "Microbial", "Vaccine"),
    ),
    Domain(
        "maternal",
        "maternal and child health",
        ("gestational weight gain", "maternal smoking", "folic acid supplementation", "caesarean delivery",
         "exclusive breastfeeding", "antenatal corticosteroids", "maternal age", "screen time",
         "household food insecurity"),
        ("preterm birth", "low birth weight", "gestational diabetes", "pre-eclampsia", "childhood obesity",
         "neonatal mortality", "childhood asthma", "neurodevelopmental delay"),
        ("pregnant women", "children aged 2 to 10 years", "women with singleton pregnancies",
         "infants born before 34 weeks", "mother-child pairs"),
        ("placental insufficiency", "fetal growth restriction", "epigenetic programming", "microbiome maturation",
         "maternal inflammation", "fetal hypoxia", "developmental plasticity"),
        ("birth weight", "gestational age", "BMI z-score", "Apgar score", "head circumference"),
        ("Premature Birth", "Infant, Low Birth Weight", "Diabetes, Gestational", "Pre-Eclampsia", "Pediatric Obesity"),
        ("Perinatal", "Paediatric", "Maternal", "Child Health"),
    ),
    Domain(
        "respir",
        "respiratory medicine",
        ("e-cigarette use", "inhaled corticosteroids", "occupational dust exposure", "household biomass fuel",
         "pulmonary rehabilitation", "obesity", "wildfire smoke", "long-acting bronchodilators", "indoor mould"),
        ("COPD exacerbation", "asthma attacks", "lung function decline", "idiopathic pulmonary fibrosis",
         "obstructive sleep apnoea", "respiratory hospitalisation", "bronchiectasis", "pneumothorax"),
        ("adults with moderate COPD", "children with persistent asthma", "coal miners", "never-smoking women",
         "patients referred for sleep studies"),
        ("airway remodelling", "eosinophilic inflammation", "mucus hypersecretion", "oxidative stress",
         "small airway disease", "alveolar epithelial injury", "bronchial hyperresponsiveness"),
        ("FEV1", "FVC", "6-minute walk distance", "apnoea-hypopnoea index", "blood eosinophil count"),
        ("Pulmonary Disease, Chronic Obstructive", "Asthma", "Idiopathic Pulmonary Fibrosis",
         "Sleep Apnea, Obstructive"),
        ("Respiratory", "Lung", "Thoracic", "Airway"),
    ),
    Domain(
        "musculo",
        "musculoskeletal health",
        ("bisphosphonate use", "resistance training", "glucocorticoid exposure", "vitamin K intake",
         "falls prevention programme", "total knee replacement", "sedentary time", "calcium supplementation",
         "opioid prescribing"),
        ("hip fracture", "osteoporosis", "knee osteoarthritis", "chronic low back pain", "sarcopenia",
         "rheumatoid arthritis flares", "falls", "gout"),
        ("postmenopausal women with osteopenia", "adults aged 70 years or older", "patients with rheumatoid arthritis",
         "workers with manual jobs", "patients awaiting joint replacement"),
        ("bone mineral density", "cartilage degeneration", "muscle protein synthesis", "bone turnover",
         "joint loading", "central sensitisation", "synovial inflammation"),
        ("bone mineral density T-score", "grip strength", "WOMAC score", "pain score", "serum urate"),
        ("Hip Fractures", "Osteoporosis", "Osteoarthritis, Knee", "Low Back Pain", "Sarcopenia"),
        ("Bone", "Musculoskeletal", "Rheumatology", "Orthopaedic"),
    ),
    Domain(
        "gastro",
        "gastroenterology and hepatology",
        ("coffee consumption", "ultra-processed food intake", "antibiotic exposure in infancy", "bariatric surgery",
         "dietary fibre intake", "Helicobacter pylori eradication", "GLP-1 receptor agonists", "fasting",
         "probiotic supplementation"),
        ("non-alcoholic fatty liver disease", "inflammatory bowel disease", "liver cirrhosis",
         "irritable bowel syndrome", "gallstone disease", "upper gastrointestinal bleeding", "coeliac disease",
         "acute pancreatitis"),
        ("adults with obesity", "patients with Crohn's disease", "people with chronic hepatitis C",
         "adults referred for endoscopy", "patients with metabolic syndrome"),
        ("hepatic steatosis", "intestinal permeability", "microbial dysbiosis", "portal hypertension",
         "mucosal healing", "bile acid signalling", "hepatic fibrosis"),
        ("ALT", "liver stiffness", "faecal calprotectin", "controlled attenuation parameter", "serum albumin"),
        ("Non-alcoholic Fatty Liver Disease", "Inflammatory Bowel Diseases", "Liver Cirrhosis",
         "Irritable Bowel Syndrome", "Coffee"),
        ("Gastroenterology", "Hepatology", "Digestive", "Liver"),
    ),
    Domain(
        "eye",
        "ophthalmology and hearing",
        ("outdoor time", "near work", "intravitreal anti-VEGF therapy", "smartphone use", "occupational noise",
         "cataract surgery", "lutein intake", "atropine eye drops", "ototoxic medication"),
        ("myopia progression", "age-related macular degeneration", "glaucoma", "diabetic retinopathy", "hearing loss",
         "tinnitus", "dry eye disease", "visual impairment"),
        ("schoolchildren aged 6 to 12 years", "adults with diabetes", "older adults with hearing loss",
         "factory workers", "patients with neovascular macular degeneration"),
        ("axial elongation", "retinal ganglion cell loss", "choroidal thinning", "cochlear hair cell damage",
         "tear film instability", "photoreceptor degeneration", "intraocular pressure"),
        ("axial length", "visual acuity", "intraocular pressure", "hearing threshold", "tear break-up time"),
        ("Myopia", "Macular Degeneration", "Glaucoma", "Diabetic Retinopathy", "Hearing Loss"),
        ("Ophthalmology", "Vision", "Eye", "Hearing"),
    ),
    Domain(
        "public",
        "health services and prevention",
        ("telehealth follow-up", "community health worker visits", "income support", "nurse-led clinics",
         "text-message reminders", "health insurance coverage", "housing first programme", "sugar taxation",
         "pharmacist-led medication review"),
        ("emergency department visits", "all-cause mortality", "hospital readmission", "medication adherence",
         "frailty", "potentially preventable admissions", "quality-adjusted life years", "polypharmacy"),
        ("patients discharged after heart failure admission", "people experiencing homelessness",
         "adults in rural primary care", "older people receiving home care", "low-income adults"),
        ("continuity of care", "health literacy", "access barriers", "care coordination", "social determinants",
         "self-management", "shared decision making"),
        ("visits per year", "days alive out of hospital", "EQ-5D index", "cost per patient", "adherence rate"),
        ("Patient Readmission", "Emergency Service, Hospital", "Frailty", "Medication Adherence", "Telemedicine"),
        ("Health Services", "Primary Care", "Preventive Medicine", "Public Health"),
    ),
)  # fmt: skip

DESIGNS: dict[str, dict[str, Any]] = {
    # name: measure, whether there is follow-up, the kind, a title tail, PubMed publication types
    "prospective cohort study": {"measure": "HR", "follow": True, "tail": "a prospective cohort study"},
    "retrospective cohort study": {"measure": "HR", "follow": True, "tail": "a retrospective cohort study"},
    "population-based cohort study": {"measure": "HR", "follow": True, "tail": "a nationwide population-based cohort"},
    "randomised controlled trial": {
        "measure": "RR", "follow": True, "tail": "a randomised controlled trial",
        "pubtypes": ["Randomized Controlled Trial"],
    },
    "cluster-randomised trial": {
        "measure": "RR", "follow": True, "tail": "a cluster-randomised trial",
        "pubtypes": ["Randomized Controlled Trial"],
    },
    "case-control study": {"measure": "OR", "follow": False, "tail": "a case-control study"},
    "nested case-control study": {"measure": "OR", "follow": False, "tail": "a nested case-control study"},
    "cross-sectional study": {"measure": "OR", "follow": False, "tail": "a cross-sectional study"},
    "Mendelian randomisation study": {"measure": "OR", "follow": False, "tail": "a Mendelian randomisation study"},
    "target trial emulation": {"measure": "HR", "follow": True, "tail": "emulation of a target trial"},
    "systematic review and meta-analysis": {
        "measure": "RR", "follow": False, "tail": "a systematic review and meta-analysis", "review": True,
        "pubtypes": ["Systematic Review", "Meta-Analysis"],
    },
}  # fmt: skip
DESIGN_WEIGHTS = (20, 12, 10, 9, 3, 8, 5, 12, 4, 4, 13)

SETTINGS: tuple[tuple[str, str], ...] = (
    ("Denmark", "the Danish national health registers"),
    ("United Kingdom", "general practices contributing to a national primary care database"),
    ("Sweden", "the Swedish total population register"),
    ("United States", "an integrated health-care delivery system in California"),
    ("United States", "twelve academic medical centres"),
    ("Canada", "administrative health databases of Ontario"),
    ("Japan", "a nationwide inpatient database"),
    ("Republic of Korea", "the National Health Insurance Service database"),
    ("China", "community health centres in three provinces"),
    ("Taiwan", "the National Health Insurance Research Database"),
    ("Netherlands", "a population-based cohort in Rotterdam"),
    ("France", "a nationwide claims database"),
    ("Germany", "statutory health insurance claims"),
    ("Spain", "primary care electronic records in Catalonia"),
    ("Italy", "regional hospital discharge records in Lombardy"),
    ("Brazil", "public hospitals in Sao Paulo"),
    ("India", "tertiary care hospitals in Chennai and Pune"),
    ("Ghana", "district hospitals in the Ashanti region"),
    ("Australia", "a state-wide linked data collection in New South Wales"),
    ("Finland", "a national birth cohort"),
    ("Norway", "the Trondelag health study"),
    ("Switzerland", "university hospitals in Zurich and Geneva"),
    ("Viet Nam", "provincial hospitals in northern Viet Nam"),
)

COVARIATES = (
    "age", "sex", "body mass index", "smoking status", "alcohol intake", "educational attainment",
    "household income", "physical activity", "diabetes", "hypertension", "prior cardiovascular disease",
    "use of lipid-lowering drugs", "estimated glomerular filtration rate", "calendar year", "region of residence",
    "deprivation index", "comorbidity score", "ethnicity", "baseline depressive symptoms", "parity",
)  # fmt: skip

ADJECTIVES = (
    "limited", "inconsistent", "conflicting", "sparse", "largely observational", "uncertain", "heterogeneous",
    "indirect", "fragmentary",
)  # fmt: skip

#: British spellings some sources turn American (Scopus and OpenAlex titles, here and there).
AMERICAN = {
    "randomised": "randomized", "Randomised": "Randomized", "hospitalisation": "hospitalization",
    "ischaemic": "ischemic", "haemodialysis": "hemodialysis", "oestrogen": "estrogen", "tumour": "tumor",
    "behavioural": "behavioral", "paediatric": "pediatric", "hyperkalaemia": "hyperkalemia",
    "hyperuricaemia": "hyperuricemia", "apnoea": "apnea", "programme": "program", "caesarean": "cesarean",
    "coeliac": "celiac", "colonisation": "colonization", "ageing": "aging", "fibre": "fiber",
}  # fmt: skip


# ----------------------------------------------------------------------------- people, places, journals

GIVEN = {
    "DE": ["Johanna", "Tobias", "Katrin", "Lukas", "Miriam", "Jörg", "Sabine", "Felix", "Ute", "Matthias"],
    "ES": ["Lucía", "Álvaro", "María José", "Sergio", "Nuria", "Javier", "Inés", "Raúl", "Elena", "Andrés"],
    "CN": ["Wei", "Na", "Xiaoming", "Jing", "Hong", "Fang", "Jianguo", "Yan", "Lei", "Hui"],
    "NO": ["Ingrid", "Lars Håkon", "Siri", "Magnus", "Kari", "Øystein", "Silje", "Bjørn", "Marte", "Eirik"],
    "VN": ["Thị Lan", "Văn Minh", "Quốc Huy", "Thu Hà", "Đức Anh", "Ngọc Mai", "Hoàng Long", "Thanh Tâm"],
    "US": ["Emily R.", "Jacob", "Laura", "Daniel", "Sarah J.", "Michael", "Ashley", "Brandon", "Megan", "Tyler"],
    "IN": ["Priya", "Arjun", "Ananya", "Rahul", "Kavya", "Vikram", "Deepa", "Sanjay", "Meera", "Rohan"],
    "CA": ["Sophie", "Étienne", "Marie-Ève", "Olivier", "Chloé", "Mathieu", "Geneviève", "Samuel"],
    "GB": ["Oliver", "Amara", "Niamh", "Ruth A.", "Margaret", "Callum", "Siobhan", "Harriet", "Rhys", "Imogen"],
    "CH": ["Chiara", "Lukas", "Anna", "Reto", "Martina", "Urs", "Céline", "Beat"],
    "KR": ["Min-jun", "Ji-woo", "Seo-yeon", "Hyun-soo", "Dong-hyun", "Eun-ji", "Sung-min", "Ha-eun"],
    "JP": ["Haruto", "Yui", "Kenji", "Aiko", "Takeshi", "Sakura", "Hiroshi", "Naomi", "Daiki", "Mei"],
    "BR": ["Rafael", "Beatriz", "João Pedro", "Camila", "Thiago", "Larissa", "Gustavo", "Fernanda"],
    "IT": ["Giulia", "Marco", "Francesca", "Alessandro", "Chiara", "Davide", "Elisa", "Matteo"],
    "GH": ["Kwame", "Akosua", "Kofi", "Ama", "Yaw", "Efua", "Kwabena", "Abena"],
    "SE": ["Karin", "Erik", "Åsa", "Johan", "Maja", "Anders", "Linnéa", "Gustav"],
    "DK": ["Mette", "Søren", "Line", "Rasmus", "Birgitte", "Jens", "Camilla", "Mikkel"],
    "FI": ["Aino", "Juha", "Päivi", "Mikko", "Riikka", "Antti", "Satu", "Jussi"],
    "NL": ["Maarten", "Lotte", "Pieter", "Sanne", "Jeroen", "Femke", "Bas", "Eline"],
    "FR": ["Camille", "Thomas", "Élodie", "Julien", "Manon", "Nicolas", "Aurélie", "Guillaume"],
    "TW": ["Chia-Hsin", "Yu-Ting", "Wen-Chieh", "Shu-Fen", "Chien-Hung", "Pei-Ling"],
    "AU": ["Jack", "Chloe", "Lachlan", "Isla", "Cooper", "Matilda", "Riley", "Georgia"],
}  # fmt: skip
FAMILY = {
    "DE": ["Müller", "Schäfer", "Weiß", "Hoffmann", "Becker", "Krüger", "Wagner", "Schröder", "Vogel", "Lehmann"],
    "ES": ["Gómez-Herrera", "Peña", "Fernández", "Ortiz", "Ruiz-Delgado", "Martín", "Castaño", "Navarro", "Ibáñez"],
    "CN": ["Zhang", "Li", "Wang", "Chen", "Liu", "Zhao", "Sun", "Huang", "Zhou", "Wu", "Xu", "Guo"],
    "NO": ["Ødegaard", "Berg", "Nygård", "Løvås", "Haugen", "Johansen", "Bakke", "Strand"],
    "VN": ["Nguyễn", "Trần", "Phạm", "Lê", "Hoàng", "Vũ", "Đặng", "Bùi"],
    "US": ["Carter", "Whitehorse", "Okafor", "Whitfield", "Johnson", "Ramirez", "Brooks", "Sullivan", "Nguyen"],
    "IN": ["Raman", "Mehta", "Iyer", "Sharma", "Reddy", "Gupta", "Nair", "Banerjee", "Kulkarni", "Pillai"],
    "CA": ["Laurent", "Gagnon", "Tremblay", "Bouchard", "Côté", "Roy", "Leblanc", "Pelletier"],
    "GB": ["Grant", "Nwosu", "Fitzgerald", "Ellison", "O'Brien", "Hughes", "Patel", "Ashworth", "Davies"],
    "CH": ["Romano", "Brunner", "Keller", "Meier", "Baumann", "Frei", "Zürcher"],
    "KR": ["Park", "Kim", "Lee", "Choi", "Kang", "Jung", "Yoon", "Han"],
    "JP": ["Sato", "Tanaka", "Watanabe", "Suzuki", "Takahashi", "Ito", "Yamamoto", "Nakamura", "Kobayashi"],
    "BR": ["Souza Lima", "Carvalho", "Almeida", "Oliveira", "Santos", "Pereira", "Costa", "Ribeiro"],
    "IT": ["Ferrari", "Bianchi", "Rossi", "Esposito", "Ricci", "Marino", "Greco", "Conti"],
    "GH": ["Mensah", "Owusu", "Boateng", "Asante", "Agyemang", "Darko", "Osei", "Appiah"],
    "SE": ["Lindqvist", "Andersson", "Åberg", "Nilsson", "Sjöberg", "Ekström", "Holm", "Berglund"],
    "DK": ["Nielsen", "Sørensen", "Pedersen", "Jørgensen", "Kristensen", "Madsen", "Thomsen", "Møller"],
    "FI": ["Virtanen", "Mäkinen", "Korhonen", "Nieminen", "Hämäläinen", "Laine", "Heikkinen", "Koskinen"],
    "NL": ["de Vries", "Bakker", "Jansen", "Visser", "van den Berg", "Smit", "Mulder", "de Boer"],
    "FR": ["Dubois", "Moreau", "Lefèvre", "Garnier", "Laurent", "Girard", "Bonnet", "Mercier"],
    "TW": ["Chen", "Lin", "Huang", "Chang", "Tsai", "Hsu", "Yang", "Cheng"],
    "AU": ["Thompson", "Walker", "Mitchell", "Kelly", "Campbell", "Robinson", "Clarke", "Wright"],
}  # fmt: skip
CITIES = {
    "DE": ["Munich", "Heidelberg", "Leipzig"], "ES": ["Madrid", "Valencia", "Seville"],
    "CN": ["Shanghai", "Chengdu", "Wuhan"], "NO": ["Oslo", "Bergen"], "VN": ["Hanoi", "Hue"],
    "US": ["Boston, MA", "Seattle, WA", "Nashville, TN", "Ann Arbor, MI"], "IN": ["Chennai", "Pune", "Lucknow"],
    "CA": ["Montréal, QC", "Toronto, ON", "Calgary, AB"], "GB": ["London", "Leeds", "Bristol", "Glasgow"],
    "CH": ["Zürich", "Basel"], "KR": ["Seoul", "Busan"], "JP": ["Tokyo", "Osaka", "Sendai"],
    "BR": ["São Paulo", "Porto Alegre"], "IT": ["Bologna", "Milan", "Naples"], "GH": ["Accra", "Kumasi"],
    "SE": ["Stockholm", "Uppsala"], "DK": ["Aarhus", "Copenhagen"], "FI": ["Helsinki", "Oulu"],
    "NL": ["Rotterdam", "Utrecht", "Groningen"], "FR": ["Bordeaux", "Lyon", "Lille"], "TW": ["Taipei", "Tainan"],
    "AU": ["Melbourne", "Sydney", "Brisbane"],
}  # fmt: skip
PLACE_WORDS = ("North", "River", "Lake", "Coast", "Valley", "Highland", "Harbour", "Forest", "Stone", "Meadow")
INSTITUTION_KINDS = (
    ("University of {place}", "education"),
    ("{place} University Hospital", "healthcare"),
    ("{place} Institute of Public Health", "facility"),
    ("{place} Medical University", "education"),
)
DEPARTMENTS = (
    "Department of Epidemiology", "Department of Medicine", "Department of Public Health", "Division of Biostatistics",
    "Department of Clinical Sciences", "Centre for Population Health", "Department of Internal Medicine",
    "School of Public Health", "Department of Paediatrics", "Department of Psychiatry",
)  # fmt: skip
PUBLISHERS = (
    "Meridian Academic Press", "Northfield Science", "Open Scholar Press", "Lakeshore Medical Publishing",
    "Harbourview Health Publishers", "Crescent Clinical Press",
)  # fmt: skip
PUBLISHER_COUNTRIES = ("Germany", "Netherlands", "Switzerland", "United States", "England", "United States")
ISO_WORDS = {
    "Journal": "J", "International": "Int", "Research": "Res", "Reports": "Rep", "Medicine": "Med",
    "Clinical": "Clin", "Epidemiology": "Epidemiol", "Cardiovascular": "Cardiovasc", "Health": "Health",
    "Review": "Rev", "Annals": "Ann", "Archives": "Arch", "Sciences": "Sci", "Cancer": "Cancer",
    "Psychiatry": "Psychiatry", "Mental": "Ment", "Neurology": "Neurol", "Kidney": "Kidney", "Renal": "Ren",
    "Infection": "Infect", "Infectious": "Infect", "Diseases": "Dis", "Perinatal": "Perinat",
    "Paediatric": "Paediatr", "Respiratory": "Respir", "Lung": "Lung", "Bone": "Bone", "Musculoskeletal":
    "Musculoskelet", "Gastroenterology": "Gastroenterol", "Hepatology": "Hepatol", "Ophthalmology": "Ophthalmol",
    "Vision": "Vis", "Primary": "Prim", "Care": "Care", "Public": "Public", "Services": "Serv",
}  # fmt: skip
JOURNAL_PATTERNS = (
    "Journal of {w} Research", "{w} Epidemiology Reports", "International Journal of {w} Medicine",
    "Annals of {w} Health", "Clinical {w} Review",
)  # fmt: skip


def issn(rng: random.Random) -> str:
    """A syntactically valid ISSN (mod-11 check character)."""
    body = [rng.randrange(10) for _ in range(7)]
    total = sum(d * w for d, w in zip(body, range(8, 1, -1)))
    check = (11 - total % 11) % 11
    text = "".join(map(str, body)) + ("X" if check == 10 else str(check))
    return f"{text[:4]}-{text[4:]}"


def iso_abbreviation(title: str) -> str:
    return " ".join(ISO_WORDS.get(word, word) for word in title.replace(" of ", " ").split())


# ----------------------------------------------------------------------------- prose


def _choice(rng: random.Random, items: Iterable[str]) -> str:
    items = tuple(items)
    return items[rng.randrange(len(items))]


def _cap(text: str) -> str:
    """Upper-case the first letter only: "SGLT2 inhibitor therapy" stays as it is, unlike str.capitalize."""
    return text[:1].upper() + text[1:]


def _estimate(rng: random.Random, measure: str, protective: bool) -> tuple[float, float, float]:
    """A ratio (or mean difference) with a plausible 95% confidence interval."""
    if measure == "MD":
        value = round(rng.uniform(0.2, 4.5) * (-1 if protective else 1), 1)
        half = round(abs(value) * rng.uniform(0.3, 0.9) + 0.1, 1)
        return value, round(value - half, 1), round(value + half, 1)
    value = rng.uniform(0.55, 0.95) if protective else rng.uniform(1.08, 2.4)
    spread = math.exp(rng.uniform(0.06, 0.3))
    return round(value, 2), round(value / spread, 2), round(value * spread, 2)


def format_estimate(measure: str, estimate: tuple[float, float, float], style: int) -> str:
    value, low, high = estimate
    if style == 0:
        return (
            f"{measure} {value:.2f}, 95% CI {low:.2f}-{high:.2f}"
            if measure != "MD"
            else (f"mean difference {value:.1f}, 95% CI {low:.1f} to {high:.1f}")
        )
    if measure == "MD":
        return f"MD {value:.1f}; 95% CI, {low:.1f} to {high:.1f}"
    return f"{measure} {value:.2f}; 95% CI, {low:.2f} to {high:.2f}"


@dataclass
class Study:
    """The facts of one work that its title, abstract, keywords and full text all tell."""

    domain: Domain
    design: str
    exposure: str
    comparator: str
    outcome: str
    secondary: list[str]
    population: str
    country: str
    setting: str
    n: int
    events: int
    follow_up: float | None
    measure: str
    protective: bool
    estimate: tuple[float, float, float]
    secondary_estimates: list[tuple[float, float, float]]
    covariates: list[str]
    mechanisms: list[str]
    studies_pooled: int = 0

    @property
    def review(self) -> bool:
        return bool(DESIGNS[self.design].get("review"))


def make_study(rng: random.Random, domain: Domain) -> Study:
    design = rng.choices(list(DESIGNS), DESIGN_WEIGHTS)[0]
    info = DESIGNS[design]
    exposure = _choice(rng, domain.exposures)
    outcome, *secondary = rng.sample(domain.outcomes, 3)
    protective = rng.random() < 0.45
    measure = info["measure"]
    country, setting = _choice(rng, SETTINGS)
    n = int(10 ** rng.uniform(2.3, 6.2)) if not info.get("review") else int(10 ** rng.uniform(4, 6.5))
    trial = "trial" in design
    if trial:
        n = int(10 ** rng.uniform(2.2, 4.0))
        comparator = _choice(rng, ("placebo", "usual care", "no intervention", "an attention control"))
    elif design.endswith("case-control study"):
        comparator = "matched controls without " + outcome
    elif info.get("review"):
        comparator = "the lowest exposure category"
    else:
        comparator = _choice(rng, ("non-users", "the lowest quintile", "participants without " + exposure,
                                   "the reference category"))  # fmt: skip
    return Study(
        domain=domain,
        design=design,
        exposure=exposure,
        comparator=comparator,
        outcome=outcome,
        secondary=secondary,
        population=_choice(rng, domain.populations),
        country=country,
        setting=setting,
        n=n,
        events=max(12, int(n * rng.uniform(0.01, 0.2))),
        follow_up=round(rng.uniform(1.0, 14.0), 1) if info["follow"] else None,
        measure=measure,
        protective=protective,
        estimate=_estimate(rng, measure, protective),
        secondary_estimates=[_estimate(rng, measure, rng.random() < 0.5) for _ in secondary],
        covariates=rng.sample(COVARIATES, rng.randint(5, 9)),
        mechanisms=rng.sample(domain.mechanisms, min(4, len(domain.mechanisms))),
        studies_pooled=rng.randint(8, 64) if info.get("review") else 0,
    )


def title_for(rng: random.Random, study: Study, kind: str) -> str:
    e, o, p = study.exposure, study.outcome, study.population
    if kind == "editorial":
        return _choice(rng, (
            f"Rethinking the risk of {o} in {p}",
            f"{_cap(e)} and the risk of {o}: where do we stand?",
            f"Risk of {o} among {p}: an unfinished story",
        ))  # fmt: skip
    if kind == "letter":
        return f"Comment on the association between {e} and risk of {o} in {p}"
    if study.review:
        return _choice(rng, (
            f"{_cap(e)} and risk of {o}: a systematic review and meta-analysis",
            f"Association of {e} with {o} in {p}: a systematic review and meta-analysis of {study.studies_pooled} studies",
        ))  # fmt: skip
    tail = DESIGNS[study.design]["tail"]
    return _choice(rng, (
        f"{_cap(e)} and risk of {o} in {p}: {tail}",
        f"Association between {e} and incidence of {o} among {p}",
        f"Effect of {e} on {o} in {p}: {tail}",
        f"{_cap(e)} and the risk of {o}: {tail} in {study.country}",
        f"Long-term {e} and {o} in {p}",
        f"Is {e} associated with {o}? Evidence from {p} in {study.country}",
    ))  # fmt: skip


def abstract_for(rng: random.Random, study: Study, year: int) -> dict[str, str] | str:
    """150-300 words, structured (BACKGROUND/METHODS/RESULTS/CONCLUSIONS) for about 60% of works."""
    s = study
    direction = "lower" if s.protective else "higher"
    est = format_estimate(s.measure, s.estimate, rng.randrange(2))
    covs = ", ".join(s.covariates[:-1]) + f" and {s.covariates[-1]}"
    if s.review:
        background = (
            f"Evidence on whether {s.exposure} changes the risk of {s.outcome} is {_choice(rng, ADJECTIVES)}, and "
            f"individual studies in {s.population} have reported estimates in both directions. "
            f"Mechanisms such as {s.mechanisms[0]} and {s.mechanisms[1]} make an association plausible."
        )
        methods = (
            f"We searched MEDLINE, Embase and CENTRAL from inception to {year - 1} for cohort studies "
            f"and randomised trials that reported the association between {s.exposure} and {s.outcome} in adults, "
            f"children or patient populations. Two reviewers screened records, extracted data and assessed risk of bias. "
            f"Estimates were pooled with a random-effects model, and heterogeneity was quantified with the I2 statistic."
        )
        results = (
            f"{s.studies_pooled} studies with {s.n:,} participants were included. Compared with "
            f"{s.comparator}, {s.exposure} was associated with a {direction} risk of {s.outcome} ({est}; "
            f"I2 = {rng.randint(10, 85)}%). The association was similar in studies at low risk of bias and did not "
            f"differ by region. Evidence for {s.secondary[0]} was less certain "
            f"({format_estimate(s.measure, s.secondary_estimates[0], 0)})."
        )
    else:
        follow = f" During a median follow-up of {s.follow_up} years, " if s.follow_up else " Overall, "
        background = (
            f"{_cap(s.exposure)} has been linked to {s.outcome} in earlier studies, but evidence in "
            f"{s.population} remains {_choice(rng, ADJECTIVES)}. "
            f"We aimed to estimate the association between {s.exposure} and the risk of {s.outcome}."
        )
        methods = (
            f"In this {s.design} conducted in {s.country} using {s.setting}, we included {s.n:,} {s.population}. "
            f"{_cap(s.exposure)} was compared with {s.comparator}. The primary outcome was {s.outcome}; "
            f"secondary outcomes included {s.secondary[0]} and {s.secondary[1]}. "
            f"Models were adjusted for {covs}."
        )
        results = (
            f"{follow.strip()} {s.events:,} participants developed {s.outcome}. {_cap(s.exposure)} was "
            f"associated with a {direction} risk of {s.outcome} ({est}). For {s.secondary[0]}, the estimate was "
            f"{format_estimate(s.measure, s.secondary_estimates[0], 0)}, and for {s.secondary[1]} it was "
            f"{format_estimate(s.measure, s.secondary_estimates[1], 0)}. Results were consistent across "
            f"subgroups defined by {s.covariates[0]} and {s.covariates[1]}."
        )
    conclusions = (
        f"{_cap(s.exposure)} was associated with a {direction} risk of {s.outcome} in {s.population}. "
        + _choice(
            rng,
            (
                "Randomised evidence is needed before the finding informs practice.",
                "These findings support targeting this exposure in prevention programmes, although residual "
                "confounding cannot be excluded.",
                f"Further work should clarify the role of {s.mechanisms[2]} in this association.",
            ),
        )  # fmt: skip
    )
    # pad to at least 150 words with sentences that carry the domain's vocabulary
    extras = [
        f"The role of {s.mechanisms[3]} in this pathway has not been examined in {s.population}.",
        f"Few studies have followed {s.population} long enough to observe {s.secondary[0]}.",
        f"Sensitivity analyses excluding the first two years and accounting for {s.covariates[2]} gave similar results.",
        "Missing covariate data were handled by multiple imputation.",
    ]
    parts = {"BACKGROUND": background, "METHODS": methods, "RESULTS": results, "CONCLUSIONS": conclusions}
    keys = ["BACKGROUND", "METHODS", "RESULTS", "BACKGROUND"]
    while sum(len(text.split()) for text in parts.values()) < rng.randint(160, 260) and extras:
        key = keys[len(extras) % len(keys)]
        parts[key] = parts[key] + " " + extras.pop(0)
    if rng.random() < 0.6:
        return parts
    return " ".join(parts.values())


def keywords_for(rng: random.Random, study: Study) -> list[str]:
    words = [study.exposure, study.outcome, study.design.replace("prospective ", "").replace("retrospective ", "")]
    words += rng.sample([*study.secondary, *study.mechanisms[:2], "risk factors", "epidemiology"], rng.randint(1, 3))
    return list(dict.fromkeys(words))


# ----------------------------------------------------------------------------- the corpus


@dataclass
class Corpus:
    """Every generated work (base and increment) plus the people, institutions and journals they use."""

    spec: SeedSpec
    institutions: dict[str, dict[str, Any]] = field(default_factory=dict)
    people: dict[str, dict[str, Any]] = field(default_factory=dict)
    journals: dict[str, dict[str, Any]] = field(default_factory=dict)
    journals_by_domain: dict[str, list[str]] = field(default_factory=dict)
    mesh: dict[str, str] = field(default_factory=dict)
    articles: list[dict[str, Any]] = field(default_factory=list)
    studies: dict[str, Study] = field(default_factory=dict)
    base_ids: list[str] = field(default_factory=list)
    increment_ids: list[str] = field(default_factory=list)

    def data(self, with_increment: bool) -> dict[str, Any]:
        """The corpus in the form of a bundled ``articles.yaml`` (what scripts/build_sample.py reads)."""
        wanted = set(self.base_ids) | (set(self.increment_ids) if with_increment else set())
        return {
            "query": SLUG,
            "openalex_topic": {
                "id": "https://openalex.org/T10066",
                "display_name": "Chronic Disease Risk Factors and Outcomes",
                "subfield": {"id": "https://openalex.org/subfields/2739", "display_name": "Public Health"},
                "field": {"id": "https://openalex.org/fields/27", "display_name": "Medicine"},
                "domain": {"id": "https://openalex.org/domains/4", "display_name": "Health Sciences"},
            },
            "institutions": self.institutions,
            "people": self.people,
            "journals": self.journals,
            "mesh_vocabulary": self.mesh,
            "articles": [article for article in self.articles if article["id"] in wanted],
        }


def _people_and_places(corpus: Corpus, rng: random.Random) -> None:
    countries = sorted(GIVEN)
    for country in countries:
        for number in range(3):
            place = f"{_choice(rng, PLACE_WORDS)}{_choice(rng, ('vale', 'ford', 'mouth', 'field', 'bridge', 'haven'))}"
            pattern, kind = INSTITUTION_KINDS[number % len(INSTITUTION_KINDS)]
            name = pattern.format(place=place)
            city = _choice(rng, CITIES[country])
            raw = f"{_choice(rng, DEPARTMENTS)}, {name}, {city}, {bs.COUNTRIES[country]}"
            corpus.institutions[f"i_{country.lower()}{number}"] = {
                "name": name, "raw": raw, "country": country, "type": kind,
            }  # fmt: skip
    keys = sorted(corpus.institutions)
    people_count = max(60, int(6 * corpus.spec.works**0.9))
    for number in range(people_count):
        institution = _choice(rng, keys)
        country = corpus.institutions[institution]["country"]
        corpus.people[f"p{number:05d}"] = {
            "given": _choice(rng, GIVEN[country]),
            "family": _choice(rng, FAMILY[country]),
            "aff": institution,
            "orcid": rng.random() < 0.35,
        }


def _journals(corpus: Corpus, rng: random.Random) -> None:
    serial = 0
    for domain in DOMAINS:
        corpus.journals_by_domain[domain.key] = []
        for word in domain.journal_words:
            for pattern in rng.sample(JOURNAL_PATTERNS, 2):
                title = pattern.format(w=word)
                key = f"j{serial:03d}"
                serial += 1
                publisher_index = rng.randrange(len(PUBLISHERS))
                oa = rng.random() < 0.3
                journal = {
                    "title": title,
                    "nlm_title": title[0] + title[1:].lower(),
                    "iso": iso_abbreviation(title),
                    "eissn": issn(rng),
                    "publisher": PUBLISHERS[publisher_index],
                    "country": PUBLISHER_COUNTRIES[publisher_index],
                    "nlm_id": str(rng.randrange(100000000, 999999999)),
                    "oa": oa,
                    "type": "journal",
                }
                if rng.random() < 0.7:
                    journal["issn"] = issn(rng)
                corpus.journals[key] = journal
                corpus.journals_by_domain[domain.key].append(key)
    corpus.journals["preprints"] = {
        "title": "MedArchive", "publisher": "Open Research Commons", "country": "United States", "oa": True,
        "type": "repository",
    }  # fmt: skip


def _mesh(corpus: Corpus) -> None:
    general = ["Humans", "Adult", "Aged", "Middle Aged", "Female", "Male", "Risk Factors", "Cohort Studies",
               "Incidence", "Proportional Hazards Models", "Case-Control Studies", "Cross-Sectional Studies",
               "Prospective Studies", "Retrospective Studies", "Mendelian Randomization Analysis", "Child",
               "Adolescent", "Pregnancy"]  # fmt: skip
    terms = general + [term for domain in DOMAINS for term in domain.mesh]
    for term in dict.fromkeys(terms):
        corpus.mesh[term] = "D" + bs.digits("mesh:" + term, 6)


def _mesh_for(rng: random.Random, study: Study) -> list[str]:
    design = {
        "prospective cohort study": ["Prospective Studies", "Cohort Studies"],
        "retrospective cohort study": ["Retrospective Studies", "Cohort Studies"],
        "population-based cohort study": ["Cohort Studies", "Incidence"],
        "case-control study": ["Case-Control Studies"],
        "nested case-control study": ["Case-Control Studies", "Cohort Studies"],
        "cross-sectional study": ["Cross-Sectional Studies"],
        "Mendelian randomisation study": ["Mendelian Randomization Analysis"],
        "target trial emulation": ["Cohort Studies", "Proportional Hazards Models"],
    }.get(study.design, [])
    people = {"children": "Child", "adolescents": "Adolescent", "pregnant": "Pregnancy", "women": "Female"}
    extra = [term for word, term in people.items() if word in study.population]
    base = rng.sample(study.domain.mesh, min(3, len(study.domain.mesh)))
    return list(dict.fromkeys([*base, *design, "Risk Factors", *extra, "Humans", "Female", "Male"]))


def _americanise(text: str) -> str:
    return re.sub(r"\b(" + "|".join(AMERICAN) + r")\b", lambda m: AMERICAN[m.group(1)], text)


def _title_case(text: str) -> str:
    small = {"and", "of", "in", "the", "a", "an", "on", "for", "with", "to", "among", "at", "from"}
    words = text.split(" ")
    return " ".join(
        w
        if (i and w.lower() in small) or not w[:1].isalpha() or any(c.isupper() for c in w[1:])
        else w[:1].upper() + w[1:]
        for i, w in enumerate(words)
    )


def _source_spec(rng: random.Random, source: str, index: int, article: dict[str, Any]) -> dict[str, Any]:
    """The source's own id plus the ways that source spells the work differently."""
    if source == "pubmed":
        spec: dict[str, Any] = {"id": str(30_000_000 + index * 41 + rng.randrange(41))}
        if rng.random() < 0.02:
            spec["doi_style"] = "upper"
        return spec
    if source == "openalex":
        spec = {"id": f"W{4_100_000_000 + index * 53 + rng.randrange(53)}"}
        roll = rng.random()
        if article.get("doi") and roll < 0.03:
            spec["doi"] = None
        elif roll < 0.11:
            spec["title"] = _title_case(article["title"])
        elif roll < 0.14:
            spec["title"] = _americanise(article["title"])
        return spec
    spec = {"id": str(85_000_000_000 + index * 97 + rng.randrange(97))}
    if rng.random() < 0.35:
        spec["ascii_names"] = True
    roll = rng.random()
    if article.get("doi") and roll < 0.04:
        spec["doi"] = None
    elif article.get("doi") and roll < 0.12:
        spec["doi_style"] = "upper"
    if rng.random() < 0.04 and article.get("abstract"):
        spec["abstract"] = None
    if rng.random() < 0.06:
        spec["title"] = _americanise(article["title"].split(": ")[0])
    return spec


def _article(corpus: Corpus, index: int, combo: tuple[str, ...]) -> dict[str, Any]:
    """One work, drawn from its own generator so the rest of the corpus never changes it."""
    rng = random.Random(f"{corpus.spec.seed}:work:{index}")
    domain = _choice(rng, DOMAINS)
    study = make_study(rng, domain)
    kind = "journal-article"
    if combo == ("openalex",) and rng.random() < 0.08:
        kind = "preprint"
    elif study.review:
        kind = "review"
    elif rng.random() < 0.03:
        kind = _choice(rng, ("editorial", "letter"))
    year = rng.choices(range(2008, 2026), [1 + (y - 2008) ** 1.3 for y in range(2008, 2026)])[0]
    month = rng.randint(1, 12)
    journal = "preprints" if kind == "preprint" else _choice(rng, corpus.journals_by_domain[domain.key])
    first_author_pool = sorted(corpus.people)
    authors: list[Any] = rng.sample(first_author_pool, rng.randint(2, 11) if kind != "editorial" else rng.randint(1, 2))
    if rng.random() < 0.02 and kind in ("journal-article", "review"):
        authors.append({"collective": f"{study.domain.name.title()} Outcomes Collaborators"})
    work_id = f"s{index:05d}"
    doi_missing = rng.random() < 0.07 and kind != "preprint"
    short = re.sub(r"[^a-z]", "", corpus.journals[journal]["title"].lower())[:4] if journal != "preprints" else "marx"
    article: dict[str, Any] = {
        "id": work_id,
        "kind": kind,
        "title": title_for(rng, study, kind),
        "authors": authors,
        "journal": journal,
        "published": f"{year}-{month:02d}",
        "epub": f"{year if month > 1 else year - 1}-{(month - 2) % 12 + 1:02d}-{rng.randint(1, 28):02d}",
        "language": "eng",
        "abstract": None if kind in ("editorial", "letter") else abstract_for(rng, study, year),
        "keywords": keywords_for(rng, study),
        "mesh": _mesh_for(rng, study),
        "cited_by": int(rng.paretovariate(1.3) * 3) if year < 2025 else 0,
    }
    if kind != "preprint":
        first_page = rng.randint(1, 2400)
        article.update(volume=str(max(1, year - 2000 + rng.randint(0, 20))), issue=str(rng.randint(1, 12)))
        article["pages"] = (
            f"{first_page}-{first_page + rng.randint(6, 16)}"
            if rng.random() < 0.7
            else str(100000 + rng.randrange(900))
        )
    if not doi_missing:
        article["doi"] = f"10.5555/{short}.{year}.{index:05d}"
    extra = DESIGNS[study.design].get("pubtypes")
    if extra and kind in ("journal-article", "review"):
        article["extra_pubtypes"] = list(extra)
    article["sources"] = {source: _source_spec(rng, source, index, article) for source in combo}
    corpus.studies[work_id] = study
    return article


def _open_access(corpus: Corpus, articles: list[dict[str, Any]], pdfs: int, rng: random.Random) -> None:
    """``pdfs`` works get a downloadable PDF; a few more are open with a broken link, as on the web."""
    eligible = [a for a in articles if a.get("doi") and a["kind"] in ("journal-article", "review", "preprint")]
    chosen = set(a["id"] for a in rng.sample(eligible, min(pdfs, len(eligible))))
    for article in articles:
        journal = corpus.journals[article["journal"]]
        if article["id"] in chosen:
            if article["kind"] == "preprint":
                status = "green"
            elif journal["oa"]:
                status = "gold"
            else:
                status = rng.choices(("hybrid", "bronze", "green"), (5, 2, 3))[0]
            license_ = None if status == "bronze" else rng.choice(("cc-by", "cc-by", "cc-by-nc", "cc-by-nc-nd"))
            article["oa"] = {"status": status, "license": license_, "pdf": True}
            pubmed = article["sources"].get("pubmed")
            if pubmed and rng.random() < 0.4:
                pubmed["pmc"] = f"PMC{8_000_000 + int(article['id'][1:]) * 7}"
        elif article.get("doi") and article["kind"] != "preprint" and rng.random() < 0.04:
            fault = rng.choice(("html", "html", "missing"))
            article["oa"] = {"status": "bronze", "license": None, "pdf": fault != "html", "fault": fault}


def build_corpus(spec: SeedSpec) -> Corpus:
    """Every work of the spec, the increment's last; deterministic in ``spec.seed``."""
    corpus = Corpus(spec)
    rng = random.Random(f"{spec.seed}:world")
    _people_and_places(corpus, rng)
    _journals(corpus, rng)
    _mesh(corpus)
    combos = [combo for combo, count in spec.categories().items() for _ in range(count)]
    random.Random(f"{spec.seed}:combos").shuffle(combos)
    base = [_article(corpus, index, combo) for index, combo in enumerate(combos)]
    _open_access(corpus, base, spec.pdfs, random.Random(f"{spec.seed}:oa"))
    new_combos = spec.increment()
    added = [_article(corpus, len(combos) + i, combo) for i, combo in enumerate(new_combos)]
    _open_access(corpus, added, max(1, len(added) // 4), random.Random(f"{spec.seed}:oa:increment"))
    corpus.articles = base + added
    corpus.base_ids = [a["id"] for a in base]
    corpus.increment_ids = [a["id"] for a in added]
    return corpus


# ----------------------------------------------------------------------------- full text

GENERIC_INTRO = (
    "Over the past two decades the burden of {outcome} has grown, driven by population ageing and by changes in "
    "the distribution of its risk factors.",
    "Clinical guidelines offer little advice on {exposure}, largely because the available evidence comes from "
    "small or short studies.",
    "Several biological pathways could link {exposure} to {outcome}, including {mech0} and {mech1}.",
    "Experimental work suggests that {mech2} responds to {exposure} within weeks, whereas {outcome} develops "
    "over years.",
    "Previous cohorts have reported {adj} estimates, and most did not distinguish {secondary0} from {outcome}.",
    "Confounding by indication and by health-seeking behaviour is a recurring concern in this literature.",
    "Reverse causation is plausible when early symptoms of {outcome} change {exposure} before diagnosis.",
    "Studies in {population} are particularly scarce, although this group carries a disproportionate share of "
    "the burden.",
    "Differences in how {exposure} was measured, from self-report to records of dispensing, complicate the "
    "comparison of published estimates.",
    "We therefore designed an analysis that addresses these limitations with repeated exposure measurements "
    "and a long follow-up.",
    "The question matters for prevention because {exposure} is common and, in principle, modifiable.",
    "Recent reviews have called for analyses that report absolute as well as relative risks.",
)
GENERIC_METHODS = (
    "Participants were eligible if they had at least one year of continuous registration before the index date.",
    "We excluded people with a diagnosis of {outcome} before baseline and those with missing information on "
    "{exposure}.",
    "Information on {exposure} was collected at baseline and updated at each follow-up visit.",
    "Exposure was categorised in quintiles, with the lowest quintile as the reference, and also analysed as a "
    "continuous variable per standard deviation.",
    "Cases of {outcome} were identified from hospital discharge records, death certificates and primary care "
    "diagnoses, using validated code lists.",
    "An independent committee unaware of exposure status adjudicated a random sample of {percent}% of events.",
    "Covariates were selected a priori from a directed acyclic graph and included {cov0}, {cov1}, {cov2} and {cov3}.",
    "Missing values of {cov1} and {cov2} were imputed by chained equations with twenty imputed data sets.",
    "The proportional hazards assumption was checked with Schoenfeld residuals and was not violated.",
    "Restricted cubic splines with four knots were used to explore non-linear associations.",
    "Effect modification by {cov0} and {cov4} was assessed with likelihood ratio tests for interaction terms.",
    "We used inverse probability weighting to account for informative loss to follow-up.",
    "Analyses were performed in R version 4.{rver} and Stata version 1{stver}.",
    "The study was approved by the regional ethics committee, and the requirement for consent was waived for "
    "registry data.",
    "Follow-up started at the index date and ended at diagnosis of {outcome}, death, emigration or the end of "
    "the study period, whichever came first.",
    "Sample size was chosen to detect a relative difference of {percent}% with 80% power at a two-sided alpha of 0.05.",
    "Person-time was split at each birthday and each change of exposure status.",
)
GENERIC_RESULTS = (
    "Participants with higher {exposure} were younger, more often women and less often current smokers.",
    "The median follow-up was {fu} years, during which {events} participants developed {outcome}.",
    "The crude incidence rate was {rate} per 1,000 person-years in the exposed and {rate2} per 1,000 "
    "person-years in the reference group.",
    "Adjustment for {cov0} and {cov1} attenuated the association only slightly.",
    "The association followed a dose-response pattern across quintiles (P for trend < 0.001).",
    "Spline analyses showed a steeper gradient at low levels of exposure and a plateau at higher levels.",
    "Results did not differ materially between men and women (P for interaction = 0.{pint}).",
    "Excluding events in the first two years of follow-up gave an almost identical estimate.",
    "For {secondary0}, the estimate was weaker and its confidence interval included the null.",
    "Negative control outcomes showed no association, arguing against strong residual confounding.",
    "The E-value for the main estimate was {evalue}, indicating that only a strong unmeasured confounder could "
    "explain it away.",
    "Complete-case analyses restricted to {complete} participants gave similar results.",
)
GENERIC_DISCUSSION = (
    "In this large study, {exposure} was associated with a {direction} risk of {outcome} after accounting for "
    "a wide range of confounders.",
    "Our estimate is close to the pooled estimate of earlier cohorts but more precise.",
    "A plausible explanation involves {mech0}, which has been shown to influence {mech1} in experimental models.",
    "The absence of an association with {secondary0} suggests that the effect is specific rather than a marker "
    "of general health.",
    "Strengths of this study include its size, the prospective collection of exposure data and the complete "
    "follow-up through linked registers.",
    "Several limitations should be considered. Exposure was measured with error, which would tend to bias "
    "estimates towards the null.",
    "Residual confounding by {cov2} and by unmeasured lifestyle factors cannot be excluded in an observational design.",
    "Outcome ascertainment relied on routine records, which may miss milder cases of {outcome}.",
    "The findings may not generalise to settings outside {country}, where the distribution of {exposure} differs.",
    "From a public health perspective, even a modest relative difference translates into many cases because "
    "{exposure} is common.",
    "Future trials should test whether changing {exposure} alters {mech2} and, in turn, the incidence of {outcome}.",
    "Clinicians caring for {population} may wish to discuss {exposure} as part of a broader risk assessment.",
)
SUBSECTIONS = {
    "Methods": ("Study design and participants", "Exposure assessment", "Outcome ascertainment", "Covariates",
                "Statistical analysis"),
    "Results": ("Participant characteristics", "Main analysis", "Secondary and sensitivity analyses"),
    "Discussion": ("Principal findings", "Comparison with previous studies", "Strengths and limitations",
                   "Implications for practice and research"),
}  # fmt: skip


def _slots(rng: random.Random, study: Study) -> dict[str, str]:
    s = study
    events = s.events
    return {
        "exposure": s.exposure, "outcome": s.outcome, "population": s.population, "country": s.country,
        "secondary0": s.secondary[0], "secondary1": s.secondary[1], "adj": _choice(rng, ADJECTIVES),
        "mech0": s.mechanisms[0], "mech1": s.mechanisms[1], "mech2": s.mechanisms[2], "mech3": s.mechanisms[3],
        "cov0": s.covariates[0], "cov1": s.covariates[1], "cov2": s.covariates[2], "cov3": s.covariates[3],
        "cov4": s.covariates[4], "percent": str(rng.randint(5, 30)), "rver": str(rng.randint(0, 4)),
        "stver": str(rng.randint(5, 8)), "fu": str(s.follow_up or round(rng.uniform(2, 10), 1)),
        "events": f"{events:,}", "rate": f"{rng.uniform(1, 40):.1f}", "rate2": f"{rng.uniform(1, 40):.1f}",
        "pint": str(rng.randint(10, 90)), "evalue": f"{rng.uniform(1.3, 3.2):.2f}",
        "complete": f"{int(s.n * rng.uniform(0.6, 0.95)):,}", "direction": "lower" if s.protective else "higher",
    }  # fmt: skip


OPENERS = (
    "", "", "", "", "In addition, ", "Notably, ", "By contrast, ", "As expected, ", "In sensitivity analyses, ",
    "Among {population}, ", "After {years} years, ", "In the fully adjusted model, ", "Consistent with earlier reports, ",
    "Unexpectedly, ", "In stratified analyses, ", "On the other hand, ", "Taken together, ",
)  # fmt: skip
SUBJECTS = (
    "the association between {exposure} and {outcome}", "the estimate for {secondary}", "mean {measure}",
    "the incidence of {outcome}", "the difference in {measure} between groups", "exposure to {exposure2}",
    "the effect of {exposure} on {mech}", "the proportion of participants with {outcome2}",
    "the hazard of {secondary}", "the relation between {mech} and {mech2}", "the cumulative risk of {outcome2}",
    "the distribution of {measure}", "the contribution of {mech}", "the absolute risk difference",
    "adherence to {exposure2}", "the gradient across {fraction}s of {exposure}",
)  # fmt: skip
PREDICATES = (
    "was attenuated after adjustment for {cov}", "did not differ by {cov} (P for interaction = 0.{p})",
    "was stronger among participants with high {measure2}", "was {pct}% {updown} in the highest than in the lowest {fraction}",
    "changed little when {cov} was added to the model", "was estimated with moderate precision",
    "was consistent across {k} geographical regions", "rose over the first {years} years of follow-up and then levelled off",
    "was partly explained by {mech}, which mediated {pct}% of the total effect",
    "was similar in analyses weighted for the probability of remaining in the study",
    "was reported in {k} of {m} earlier studies", "has rarely been examined in {population}",
    "may reflect differences in {mech} between groups", "was measured at baseline and after {years} years",
    "varied between {low} and {high} across study sites", "was lower in {country} than in comparable settings",
    "depended on how {cov} was coded", "was robust to the choice of time scale",
    "showed no clear threshold below {low} units", "was larger in participants recruited after {year}",
    "is biologically plausible given the role of {mech}", "was underestimated in analyses based on a single measurement",
    "fell by {pct}% when {cov} was modelled as a time-varying covariate",
)  # fmt: skip


def _sentence(rng: random.Random, slots: dict[str, str], study: Study) -> str:
    """One of a few thousand combinations of opener, subject and predicate, filled with the work's vocabulary."""
    d = study.domain
    fill = {
        **slots,
        "exposure2": _choice(rng, d.exposures), "outcome2": _choice(rng, d.outcomes),
        "secondary": _choice(rng, study.secondary), "measure": _choice(rng, d.measures),
        "measure2": _choice(rng, d.measures), "mech": _choice(rng, d.mechanisms), "mech2": _choice(rng, d.mechanisms),
        "cov": _choice(rng, study.covariates), "p": str(rng.randint(10, 95)), "pct": str(rng.randint(4, 45)),
        "updown": _choice(rng, ("higher", "lower")), "fraction": _choice(rng, ("tertile", "quartile", "quintile")),
        "k": str(rng.randint(2, 9)), "m": str(rng.randint(10, 30)), "years": str(rng.randint(2, 12)),
        "low": f"{rng.uniform(0.5, 20):.1f}", "high": f"{rng.uniform(21, 90):.1f}", "year": str(rng.randint(1995, 2020)),
    }  # fmt: skip
    text = (_choice(rng, OPENERS) + _choice(rng, SUBJECTS) + " " + _choice(rng, PREDICATES) + ".").format(**fill)
    return text[0].upper() + text[1:]


def _paragraph(rng: random.Random, pool: list[str], slots: dict[str, str], study: Study) -> str:
    """Five to nine sentences: the section's own sentences (each used once per article while they last)
    mixed with combinatorial sentences in the work's domain vocabulary."""
    sentences = [pool.pop().format(**slots) for _ in range(min(len(pool), rng.randint(1, 3)))]
    for _ in range(rng.randint(4, 6)):
        sentences.insert(rng.randrange(len(sentences) + 1), _sentence(rng, slots, study))
    return " ".join(sentences)


def _table(rng: random.Random, study: Study, number: int, kind: str) -> dict[str, Any]:
    s = study
    if kind == "baseline":
        header = ["Characteristic", "Exposed", "Reference", "Total"]
        rows = [["Participants, n", f"{s.n // 3:,}", f"{s.n - s.n // 3:,}", f"{s.n:,}"]]
        rows.append(
            ["Age, years, mean (SD)", *(f"{rng.uniform(35, 75):.1f} ({rng.uniform(6, 14):.1f})" for _ in range(3))]
        )
        rows.append(["Women, %", *(f"{rng.uniform(30, 70):.1f}" for _ in range(3))])
        for measure in rng.sample(s.domain.measures, 3):
            rows.append(
                [
                    f"{measure}, mean (SD)",
                    *(f"{rng.uniform(1, 140):.1f} ({rng.uniform(0.5, 20):.1f})" for _ in range(3)),
                ]
            )
        for covariate in s.covariates[:4]:
            rows.append([f"{_cap(covariate)}, %", *(f"{rng.uniform(2, 60):.1f}" for _ in range(3))])
        caption = f"<b>Table {number}.</b> Baseline characteristics of {s.population} by {s.exposure}."
        widths = [0.4, 0.2, 0.2, 0.2]
    elif kind == "main":
        header = ["Outcome", "Events", "Crude estimate (95% CI)", "Adjusted estimate (95% CI)"]
        rows = []
        for outcome, estimate in ((s.outcome, s.estimate), *zip(s.secondary, s.secondary_estimates)):
            crude = _estimate(rng, s.measure, estimate[0] < 1)
            rows.append([
                outcome, f"{rng.randint(12, max(13, s.events)):,}",
                f"{crude[0]:.2f} ({crude[1]:.2f}-{crude[2]:.2f})", f"{estimate[0]:.2f} ({estimate[1]:.2f}-{estimate[2]:.2f})",
            ])  # fmt: skip
        caption = (
            f"<b>Table {number}.</b> Association of {s.exposure} with {s.outcome} and secondary outcomes ({s.measure})."
        )
        widths = [0.34, 0.14, 0.26, 0.26]
    else:
        header = ["Analysis", s.measure, "95% CI"]
        rows = []
        for label in ("Main analysis", "Excluding first 2 years", "Complete cases", f"Additionally adjusted for {s.covariates[-1]}",
                      "Competing risk model", "Women only", "Men only"):  # fmt: skip
            value = _estimate(rng, s.measure, s.protective)
            rows.append([label, f"{value[0]:.2f}", f"{value[1]:.2f}-{value[2]:.2f}"])
        caption = f"<b>Table {number}.</b> Sensitivity analyses of {s.exposure} and {s.outcome}."
        widths = [0.5, 0.2, 0.3]
    return {"caption": caption, "header": header, "rows": rows, "widths": widths}


def fulltext_for(corpus: Corpus, work_id: str) -> list[dict[str, Any]]:
    """Sections as (heading, level, paragraphs, tables): 10-15 pages of a two-column article once laid out."""
    study = corpus.studies[work_id]
    rng = random.Random(f"{corpus.spec.seed}:fulltext:{work_id}")
    slots = _slots(rng, study)
    sections: list[dict[str, Any]] = []

    pools: dict[int, list[str]] = {}

    def add(heading: str, level: int, pool: tuple[str, ...], paragraphs: int, tables: Iterable[str] = ()) -> None:
        remaining = pools.setdefault(id(pool), rng.sample(pool, len(pool)))
        body = [_paragraph(rng, remaining, slots, study) for _ in range(paragraphs)]
        sections.append({"heading": heading, "level": level, "paragraphs": body, "tables": list(tables)})

    size = rng.uniform(2.3, 3.0)  # how long this article runs: 10-15 pages

    def count(low: int, high: int) -> int:
        return max(1, round(rng.randint(low, high) * size))

    add("Introduction", 1, GENERIC_INTRO, count(4, 6))
    sections.append({"heading": "Methods", "level": 1, "paragraphs": [], "tables": []})
    for sub in SUBSECTIONS["Methods"]:
        add(sub, 2, GENERIC_METHODS, count(2, 4))
    sections.append({"heading": "Results", "level": 1, "paragraphs": [], "tables": []})
    tables = [["baseline"], ["main"], ["sensitivity"] if rng.random() < 0.7 else []]
    for sub, kinds in zip(SUBSECTIONS["Results"], tables):
        add(sub, 2, GENERIC_RESULTS, count(3, 5), kinds)
    sections.append({"heading": "Discussion", "level": 1, "paragraphs": [], "tables": []})
    for sub in SUBSECTIONS["Discussion"]:
        add(sub, 2, GENERIC_DISCUSSION, count(2, 4))
    add("Conclusions", 1, GENERIC_DISCUSSION, 1)
    return sections


def references_for(corpus: Corpus, work_id: str, known: list[dict[str, Any]]) -> list[str]:
    """25-45 references: about a third to works of the corpus (with DOIs), the rest to outside works."""
    rng = random.Random(f"{corpus.spec.seed}:references:{work_id}")
    study = corpus.studies[work_id]
    total = rng.randint(25, 45)
    others = [other for other in known if other["id"] != work_id]
    inside = rng.sample(others, min(len(others), total // 3))
    entries = []
    for other in inside:
        names = [corpus.people[a]["family"] + " " + bs.initials(corpus.people[a]["given"])
                 for a in other["authors"] if isinstance(a, str)]  # fmt: skip
        who = ", ".join(names[:3]) + (", et al" if len(names) > 3 else "")
        journal = corpus.journals[other["journal"]]
        entries.append(
            f"{who}. {bs.plain(other['title'])}. {journal.get('iso', journal['title'])}. "
            f"{other['published'][:4]};{other.get('volume', '')}:{other.get('pages', '')}. doi:{other['doi']}"
        )
    for _ in range(total - len(inside)):
        country = _choice(rng, sorted(FAMILY))
        names = ", ".join(
            f"{_choice(rng, FAMILY[country])} {_choice(rng, 'ABCDEFGHJKLMNPRSTW')}" for _ in range(rng.randint(1, 3))
        )
        topic = _choice(
            rng, (study.exposure, _choice(rng, study.domain.exposures), _choice(rng, study.domain.mechanisms))
        )
        target = _choice(rng, study.domain.outcomes)
        journal = iso_abbreviation(_choice(rng, JOURNAL_PATTERNS).format(w=_choice(rng, study.domain.journal_words)))
        entries.append(
            f"{names}, et al. {_cap(topic)} and {target}: {_choice(rng, ('a cohort study', 'a review', 'a pooled analysis', 'a randomised trial', 'evidence from registries'))}. "
            f"{journal}. {rng.randint(1995, 2024)};{rng.randint(1, 90)}:{rng.randint(1, 900)}-{rng.randint(901, 999)}."
        )
    rng.shuffle(entries)
    return entries


# ----------------------------------------------------------------------------- PDFs

_PDF_STATE: dict[str, Any] = {}


def _pdf_worker_init(corpus: Corpus, data: dict[str, Any], folder: str) -> None:
    """Per process: the corpus, the rendered sample model and reportlab, built once."""
    import build_sample_pdfs  # noqa: F401  (reportlab import cost paid once per worker)

    _PDF_STATE["corpus"] = corpus
    sample = bs.Sample(data)
    _PDF_STATE["sample"] = sample
    _PDF_STATE["folder"] = Path(folder)
    _PDF_STATE["known"] = [a for a in data["articles"] if a.get("doi")]


def _render_pdf(job: tuple[str, str]) -> tuple[str, int, int]:
    """Write one article PDF; returns (file name, pages, bytes)."""
    work_id, name = job
    sample = _PDF_STATE["sample"]
    data = article_pdf(_PDF_STATE["corpus"], sample.by_id[work_id], _PDF_STATE["known"])
    (_PDF_STATE["folder"] / name).write_bytes(data)
    return name, len(re.findall(rb"/Type /Page[^s]", data)), len(data)


def _markup(text: str) -> str:
    """``build_sample_pdfs.markup``, with a fast path for ASCII text (most of the generated prose)."""
    import build_sample_pdfs as bp

    if not text.isascii():
        return bp.markup(text)
    escaped = html.escape(text, quote=False)
    return re.sub(r"&lt;(/?)(i|b|sub|sup)&gt;", r"<\1\2>", escaped)


def article_pdf(corpus: Corpus, work: dict[str, Any], known: list[dict[str, Any]]) -> bytes:
    """A two-column article laid out like the bundled sample's PDFs (same styles, header, margins)."""
    import build_sample_pdfs as bp
    from reportlab.lib.pagesizes import A4
    from reportlab.platypus import BaseDocTemplate, Frame, FrameBreak, PageTemplate, Paragraph

    head = bp.head_block(work)
    head_top = bp.PAGE_HEIGHT - bp.MARGIN_TOP
    height = bp.head_height(head)
    first = [
        Frame(bp.MARGIN_X, head_top - height, bp.TEXT_WIDTH, height, id="head",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
        *bp.columns(head_top - height),
    ]  # fmt: skip
    flowables: list[Any] = []
    numbers = [0, 0]
    table_number = 0
    for section in fulltext_for(corpus, work["id"]):
        if section["level"] == 1:
            numbers = [numbers[0] + 1, 0]
            flowables.append(Paragraph(f"{numbers[0]} {_markup(section['heading'])}", bp.STYLES["heading"]))
        else:
            numbers[1] += 1
            label = f"{numbers[0]}.{numbers[1]} {_markup(section['heading'])}"
            flowables.append(Paragraph(label, bp.STYLES["subheading"]))
        for text in section["paragraphs"]:
            flowables.append(Paragraph(_markup(text), bp.STYLES["body"]))
        for kind in section["tables"]:
            table_number += 1
            flowables += bp.written_table(
                _table(random.Random(f"{work['id']}:{kind}"), corpus.studies[work["id"]], table_number, kind)
            )
    flowables.append(Paragraph("References", bp.STYLES["heading"]))
    for number, entry in enumerate(references_for(corpus, work["id"], known), 1):
        flowables.append(Paragraph(f"[{number}] {_markup(entry)}", bp.STYLES["reference"]))
    buffer = io.BytesIO()
    document = BaseDocTemplate(
        buffer,
        pagesize=A4,
        invariant=1,
        pageCompression=1,
        title=bs.plain(bp.pdf_text(work["title"])),
        author="; ".join(bp.pdf_text(author.display) for author in work["authors"]),
        subject=f"doi:{work['doi']}",
        creator="hysem seed-scale benchmark",
        pageTemplates=[
            PageTemplate("first", first, onPage=bp.decorate(work), autoNextPageTemplate="later"),
            PageTemplate("later", bp.columns(head_top), onPage=bp.decorate(work)),
        ],
    )
    document.build([*head, FrameBreak(), *flowables])
    return buffer.getvalue()


def _render_files(
    corpus: Corpus, data: dict[str, Any], work_ids: set[str], folder: Path, workers: int
) -> tuple[int, list[int], int]:
    """Files under files/ for ``work_ids``: article PDFs (in ``workers`` processes) and landing pages."""
    import build_sample_pdfs as bp

    folder.mkdir(parents=True, exist_ok=True)
    sample = bs.Sample(data)
    jobs: list[tuple[str, str]] = []
    written = 0
    for work in sample.works:
        if work["id"] not in work_ids or not work.get("doi"):
            continue
        for name, kind in bs.mirror_files(work).items():
            if kind == "pdf":
                jobs.append((work["id"], name))
            else:
                (folder / name).write_bytes(bp.landing_page(work))
                written += 1
    pages: list[int] = []
    size = 0
    if jobs:
        context = multiprocessing.get_context("fork")
        with context.Pool(max(1, workers), _pdf_worker_init, (corpus, data, str(folder))) as pool:
            for _, page_count, length in pool.imap_unordered(_render_pdf, jobs, chunksize=4):
                pages.append(page_count)
                size += length
    return written + len(jobs), pages, size


# ----------------------------------------------------------------------------- writing


@dataclass
class SnapshotStats:
    works: int
    records: dict[str, int]
    pdfs: int
    pdf_pages: list[int]
    pdf_bytes: int
    seconds: float

    def describe(self) -> str:
        pages = sorted(self.pdf_pages)
        span = f", {pages[0]}-{pages[-1]} pages (median {pages[len(pages) // 2]})" if pages else ""
        records = ", ".join(f"{s} {n:,}" for s, n in self.records.items())
        return (
            f"{self.works:,} works, {sum(self.records.values()):,} records ({records}), {self.pdfs:,} PDFs"
            f"{span}, {self.pdf_bytes / 2**20:.1f} MiB, in {self.seconds:.1f} s"
        )


def _write_metadata(corpus: Corpus, folder: Path, with_increment: bool) -> dict[str, Any]:
    data = corpus.data(with_increment)
    bs.write(bs.render(bs.Sample(data)), folder)
    harvest = "# The benchmark's search per source (benchmarks/seedgen.py); the mirror replays this folder for it.\n"
    (folder / "harvest.yaml").write_text(harvest + _yaml(QUERY), encoding="utf-8")
    manifest = {
        "generator": GENERATOR_VERSION,
        "spec": asdict(corpus.spec),
        "with_increment": with_increment,
        "slug": SLUG,
        "query": QUERY,
        "works": len(data["articles"]),
        "increment_ids": corpus.increment_ids,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return data


def _yaml(mapping: dict[str, str]) -> str:
    import yaml

    return yaml.safe_dump(mapping, sort_keys=False, width=100, allow_unicode=True)


def _counts(data: dict[str, Any]) -> dict[str, int]:
    return {s: sum(s in a["sources"] for a in data["articles"]) for s in SOURCES}


def write_snapshot(folder: Path, spec: SeedSpec, workers: int = 2, corpus: Corpus | None = None) -> SnapshotStats:
    """Write the base snapshot (without the increment) into ``folder``."""
    started = time.perf_counter()
    corpus = corpus or build_corpus(spec)
    folder.mkdir(parents=True, exist_ok=True)
    data = _write_metadata(corpus, folder, with_increment=False)
    files, pages, size = _render_files(corpus, data, set(corpus.base_ids), folder / "files", workers)
    return SnapshotStats(len(data["articles"]), _counts(data), len(pages), pages, size, time.perf_counter() - started)


def add_increment(folder: Path, spec: SeedSpec, workers: int = 2, corpus: Corpus | None = None) -> SnapshotStats:
    """Add the increment's new works to a snapshot ``write_snapshot`` wrote; earlier files stay as they are."""
    started = time.perf_counter()
    corpus = corpus or build_corpus(spec)
    data = _write_metadata(corpus, folder, with_increment=True)
    new = {a["id"]: a for a in data["articles"] if a["id"] in set(corpus.increment_ids)}
    files, pages, size = _render_files(corpus, data, set(new), folder / "files", workers)
    counts = {s: sum(s in a["sources"] for a in new.values()) for s in SOURCES}
    return SnapshotStats(len(new), counts, len(pages), pages, size, time.perf_counter() - started)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    path = folder / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
