"""Acceptance criteria: small evaluators that turn measured data into Verdicts.

Each criterion is one module with NAME, a pydantic `Params` model (the bounds a
spec YAML may set, each declared there only) and `evaluate(data..., params) -> Verdict`. Evaluators take
plain data (RunResult, WindowStats, Series, SweepPoint lists, numbers), never
pytest objects. criteria/registry.py maps names to them; criteria/spec.py loads
poc.yaml / nightly.yaml.
"""
