"""The product's core: pure Python, importable without Textual."""
