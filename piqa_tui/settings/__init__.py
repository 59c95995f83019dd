"""User settings: the config file (typed, checked once), where files live, which model to use."""
