"""Loupe's decisions: actions, the state graph, memory, planner, critic, turn loop, searches.

No Gradio in here: every capability is a plain Python call and a CLI command
(``python -m agent …``).
"""
