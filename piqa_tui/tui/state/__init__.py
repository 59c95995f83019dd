"""What the screens show, derived from the project without Textual: the session, listing, search, ballots, model scores."""
