"""Work that comes from another machine: its workspace file read without writing it, every event passed through
the gate (``gate``) before anything is committed, and the merge of two logs (``merge``)."""
