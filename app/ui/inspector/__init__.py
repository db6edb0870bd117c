"""The stream inspector: a dock with the live and stored timeline of a reply (``dock``) and its plot
(``timeline_view``)."""
