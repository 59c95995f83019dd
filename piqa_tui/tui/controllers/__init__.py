"""What the main screen does besides showing, as plain objects the screen owns.

A controller holds a feature's state and logic (editing, filtering and
search, the dataset file, voting and review, model scoring) and talks to its
screen through a small protocol of callbacks (``host.py`` and the protocol
each adds: ``EditingHost``, ``FilteringHost``, ``FilesHost``, ``VotingHost``,
``ScoringHost``); the screen turns keys into calls on it and draws what it
says. No controller imports a screen (the screens they open are the host's
to open), so each is tested with a real session and a stand-in for the screen.
"""
