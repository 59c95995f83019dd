"""The backends that generate text, one module each, registered here (see ``kind.py``); a project adds one
with ``register_generation_backend``."""
