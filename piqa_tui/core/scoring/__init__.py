"""Scoring items with a language model: prompt templates, the backend protocol, the llama.cpp
backend, per-item results and summaries, the score cache and the engine that runs it all."""
