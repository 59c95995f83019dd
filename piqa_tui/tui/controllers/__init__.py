"""What the main screen does besides browsing and editing, as plain objects the screen owns.

A controller holds a feature's state and logic (voting and review, model
scoring) and talks to its screen through a small protocol of callbacks
(``VotingHost``, ``ScoringHost``); the screen turns keys into calls on it and
draws what it says. No controller imports the screen, so each is tested with a
real session and a stand-in for the screen.
"""
