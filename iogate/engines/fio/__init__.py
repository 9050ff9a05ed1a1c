"""fio: job rendering, running on initiators, json+ and log parsing (every json layout since fio 3.0:
versions.py), and reading any fio output file into records (output.read_fio_output)."""
