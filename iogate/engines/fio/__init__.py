"""fio: job rendering, running on initiators, json+ and log parsing."""
