"""A trained span tagger for participants, interventions and outcomes (PICO), shipped as ONNX.

The roles a protocol field can take from it (``method: tagger:<role>``) are named here, so the
configuration can check them without loading the tagger or its dependencies.
"""

from typing import Literal

Role = Literal["participants", "interventions", "comparators", "outcomes"]
ROLES: tuple[Role, ...] = ("participants", "interventions", "comparators", "outcomes")
