"""Small pure helpers every layer may use: ``jsonfast`` (JSON loading), ``gctools`` (pausing
the collector around bulk work), ``table`` (plain-text tables), ``words`` (counts in
English)."""
