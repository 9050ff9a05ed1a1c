"""Timed array actions during a workload (snapshot, dedupe, replicate, mirror, degrade) and the windows they cut.

    model.py     Event, EventRecord, Timeline, EventError, WindowTooShort; REQUIRES
    schedule.py  EventSchedule (plays the events beside a workload), EventRun, now_ms
    actions.py   ACTIONS: action name -> what it does to the array driver
    load.py      the load beside the events: fill plan, verifier job and its check, phases, rise evidence
"""
