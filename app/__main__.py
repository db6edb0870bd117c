"""``python -m app`` runs Brook."""

from app.launcher import main

raise SystemExit(main())
