"""Load generators (fio, vdbench) behind one Engine protocol."""
