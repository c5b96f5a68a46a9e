"""Searches over edits: Autopilot's MCTS, the multi-instruction tree search, and the
memory of past Autopilot runs."""
