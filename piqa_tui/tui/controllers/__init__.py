"""What the screens do besides showing, and every write they make, as plain objects the screens own.

A controller holds a feature's state and logic (the main screen's editing, filtering and
search, the dataset file, voting and review, the policy, scoring, authoring and display; the
duplicates, adjudication and guidelines screens' own) and talks to its screen through a small
protocol of callbacks (``host.py``, ``dialogs/asker.py``'s ``Submitter``, and the protocol each
adds); the screen turns keys into calls on it and draws what it says. A write is submitted to
the host (``submit``), never put on the session's queue here. No controller imports a screen (the
screens they open are the host's to open), so each is tested with a real session and a stand-in
for the screen.
"""
