"""The widgets of the item list (a virtual list that draws only the rows on screen)."""
