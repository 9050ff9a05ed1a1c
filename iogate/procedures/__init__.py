"""The published procedures as data, and the fio jobs they become.

One module per procedure, each with its catalog's schema (workloads/*.yaml,
validated with file:line errors before any test runs), its loader and its job
building:

    dell.py       Dell PowerStore sweep (sweeps.yaml): read % x block size x threads
    hitachi.py    Hitachi VM tiles (vm_tiles.yaml): 25 VMs, per-VM IOPS targets
    iogen.py      IOgen KPI cases (iogen.yaml): frontend/backend, SPEED/THROUGHPUT
    netapp.py     NetApp protocol comparison (netapp.yaml): VM-count scaling, single VM
    scaling.py    Intel/VAST client stepping: step plans, per-step figures, slow hosts
                  (no catalog file: its workloads are listed in tests/test_scaling.py)

and what they share:

    common.py     Strict models, DataPattern, the profile's grid override and pick
    placement.py  VMs -> hosts, volumes and regions (place_vms), VMJobs
    prefill.py    the suite's prefill (Dell's pre-fill) and its plan
"""
