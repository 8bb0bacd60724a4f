"""Where data lives: Hermes' databases read-only (state.db, projects.db), which of their rows are
history, and the plugin's own bindings store (the embedding index lives in embedding/).
"""
