"""An annotation round: who is in it with which roles, how many validators each item needs, the routing rules,
the assignment drawn from them, and how far everyone is. Recorded in the workspace as events, like votes."""
