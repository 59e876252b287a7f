"""A trained span tagger for participants, interventions and outcomes (PICO), shipped as ONNX."""
