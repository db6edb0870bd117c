"""The stream inspector: the dock that holds it (``dock``: added to the window hidden, light to import), its
content (``panel.StreamInspector``: the live or stored timeline of a reply and its figures, built when the dock
first opens) and the plot (``timeline_view``). ``panel`` and ``timeline_view`` use numpy; nothing imports them
before the inspector is opened."""
