"""The vdbench engine: parmfile rendering, running vdbench, parsing its output directory.

Modules, one concept each:
  source     vdbench's html report files as numbered text lines (errors name file:line)
  version    which vdbench (5.04.01-5.04.07) wrote a directory, and what that changes in reading it
  clock      a row's local time and zone (summary.html places it) as epoch ms
  flatfile   flatfile.html: per-interval rows and vdbench's avg_X-Y rows
  window     which intervals an avg_X-Y row aggregates, and the aggregate itself
  buckets    vdbench's latency histogram (its own bucket edges, never fio bins)
  reports    summary-format reports (summary.html, per SD / WD / host)
  errorlog   errorlog.html: I/O and data-validation errors
  outdir     a whole output directory -> run points -> iogate RunResults
  parmfile   a RunPlan rendered as a vdbench parameter file (and what cannot be: Unsupported)
  locate     where the vdbench installation is
  health     vdbench's exit code and its own warnings/aborts -> EngineError
  netns_master  multi-host (hd=): a master namespace linked to the netns lab's host namespaces
  runner     VdbenchEngine (same interface as FioEngine)
  cli        `python -m iogate vdbench-parse OUTDIR [--json]`
"""
