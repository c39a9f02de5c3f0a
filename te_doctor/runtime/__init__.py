"""The runtime API: ``select_path()``, enabling the chosen path, and the decision cache."""
