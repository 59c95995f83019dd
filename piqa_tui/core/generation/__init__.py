"""Text generation: the model as a writing assistant (draft, translate, suggest), beside the scoring model.

``protocol`` is the one small surface every generation backend speaks (requests, results, provenance);
``backends`` is the registry of backend kinds (the local GGUF model in its own process, an OpenAI-compatible
server), as ``core/scoring/backends`` is for scoring.
"""
