"""``sitegen measure --fleet``: campaigns across machines on a Ray cluster."""
