"""Array drivers: the array side of a lab (volumes, mappings, data services)."""
