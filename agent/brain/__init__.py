"""The agent's judgement: planner, critic, language/vision models, prompts, checklists,
the perceiver of Autopilot."""
