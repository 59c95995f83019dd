"""The model as a writing assistant: jobs as prompt templates, drafting and translating items, suggestions.

The generation backends live in ``core/generation``; this package says what to ask them (``job_templates``),
runs batch jobs whose results enter the dataset only as drafts with their origin (``drafting``, ``runs``,
``repetition``, ``examples``), and turns a suggestion on one item into changes a person takes one by one
(``suggesting``). Nothing here writes a gold label, a vote or an answer.
"""
