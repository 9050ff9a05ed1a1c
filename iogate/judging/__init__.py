"""The judging layer: every rule that turns measured evidence into Verdicts, in one place.

Criteria: one module each (throughput_min, latency_bound, ... no_stall) with NAME,
the evidence it accepts (EVIDENCE), a pydantic `Params` model (its bounds, each
declared there only) and `evaluate(evidence..., params) -> Verdict`; registry.py
lists them, one line each. spec.py loads a spec YAML of criteria/ (data) into
Checks, validated against the cases (cases.py) and families (families.py).
Families turn a spec's checks plus typed evidence into verdicts: family_rules.py
(the rules every family gets: no_errors, no_stall, expected points, comparands),
events_family.py, scaling_family.py; judge.py is the one entry point a test uses
(through the `judge` fixture). Library code: never imports pytest.
"""
