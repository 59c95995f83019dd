"""Text as stored and as shown: normalisation, invisible characters, scripts, grapheme clusters,
the bidi display adapter and the word differences between solutions."""
