"""Label quality: which labels and items to distrust before release."""
