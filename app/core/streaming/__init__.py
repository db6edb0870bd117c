"""One reply from engine to ``Message``: the bounded chunk stream, a generation, the fair scheduler, metrics, timeline
figures, the loop watchdog, provenance."""
