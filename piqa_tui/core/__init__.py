"""The product's core: pure Python, importable without Textual, one subpackage per noun a curator knows.

``text`` (stored text, graphemes, bidi display, word differences), ``dataset``
(items, layouts, labels, file formats, validate's rules), ``workspace`` (the
event log and the project state derived from it), ``votes`` (vote files, the
decision policy, decisions, agreement, blind rules, flags), ``dedup``
(folding, lexical and semantic search, clusters, resolution, the scan both
faces run), ``scoring`` (templates, the backend protocol, the llama.cpp
backend, the cache, the engine) and ``report`` (statistics, the card).
Nothing here imports Textual, the TUI or the CLI (tests/test_layers.py).
"""
